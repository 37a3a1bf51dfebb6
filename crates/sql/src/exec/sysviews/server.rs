//! Server-level views: `sys.dm_os_sys_info` (the machine and the instance), the principals
//! (`sys.server_principals`, `sys.database_principals`, `sys.sql_logins`), the server
//! options (`sys.configurations`) and the compatibility view `sys.sysprocesses`.
//!
//! Walden has one login (`sa`) and no users or roles of its own: the principals are the fixed
//! ones every SQL Server instance and database has. Its server options come from
//! `walden.toml` and the command line, so `sys.configurations` is a fixed list that shows
//! Walden's real value where the SQL layer knows it and SQL Server's default otherwise.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use walden_engine::types::{Len, SqlType, Value};

use super::catalog::created_micros;
use super::sessions::{conn_of, lock_wait, lock_wait_type, rows_of, wait_resource, SessionRow};
use super::{
    big, bit, datetime, int, now_micros, nstr, small, RowSet, View, ViewContext, DESC, SYSNAME,
};

/// What `sys.dm_os_sys_info` shows of the machine and the instance, read once per query.
struct SysInfo {
    /// Logical CPUs the process may use.
    cpus: u64,
    sockets: u64,
    cores_per_socket: u64,
    numa_nodes: u64,
    physical_kb: u64,
    /// Pages the buffer pools hold now, in KB.
    committed_kb: u64,
    /// Pages the buffer pools can hold, in KB.
    target_kb: u64,
    /// Milliseconds since the machine started.
    ms_ticks: u64,
    /// `ms_ticks` when the instance (its counters) started.
    start_ms_ticks: u64,
    /// When the instance started, in microseconds since the Unix epoch.
    start_micros: u64,
    kernel_ms: u64,
    user_ms: u64,
    hypervisor: bool,
}

/// A `/proc` file's text, if it can be read (not on every system).
fn proc_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `MemTotal` of `/proc/meminfo`, in KB.
fn physical_memory_kb() -> Option<u64> {
    let text = proc_text("/proc/meminfo")?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Milliseconds since the machine started, from `/proc/uptime`.
fn machine_uptime_ms() -> Option<u64> {
    let text = proc_text("/proc/uptime")?;
    let seconds: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some((seconds * 1000.0) as u64)
}

/// The process's (user, kernel) CPU time in milliseconds, from `/proc/self/stat`. Its times
/// are in USER_HZ, which Linux fixes at 100 per second for every program that reads them.
fn process_times_ms() -> Option<(u64, u64)> {
    let text = proc_text("/proc/self/stat")?;
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    let user: u64 = fields.get(11)?.parse().ok()?;
    let kernel: u64 = fields.get(12)?.parse().ok()?;
    Some((user * 10, kernel * 10))
}

/// (sockets, cores per socket, hypervisor) from `/proc/cpuinfo`.
fn cpu_topology() -> Option<(u64, Option<u64>, bool)> {
    let text = proc_text("/proc/cpuinfo")?;
    let value = |line: &str| line.split_once(':').map(|(_, v)| v.trim().to_string());
    let sockets: BTreeSet<String> =
        text.lines().filter(|l| l.starts_with("physical id")).filter_map(value).collect();
    let cores = text
        .lines()
        .find(|l| l.starts_with("cpu cores"))
        .and_then(value)
        .and_then(|v| v.parse().ok());
    let hypervisor = text
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    Some((sockets.len().max(1) as u64, cores, hypervisor))
}

/// NUMA nodes under `/sys/devices/system/node` (1 where the directory is missing).
fn numa_nodes() -> u64 {
    let Ok(entries) = std::fs::read_dir("/sys/devices/system/node") else { return 1 };
    let count = entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("node")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    (count as u64).max(1)
}

impl SysInfo {
    fn read(ctx: &ViewContext<'_>) -> SysInfo {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let (sockets, cores, hypervisor) = cpu_topology().unwrap_or((1, None, false));
        // The one budget is the memory Walden commits to and targets: the buffer pool's
        // frames plus what it lent to query memory, and `max_server_memory_mb`.
        let memory = ctx.instance.frame_pool().memory();
        let committed = (memory.allocated_bytes() + memory.lent_bytes as u64) / 1024;
        let target = memory.capacity_frames as u64 * super::PAGE_BYTES / 1024;
        let uptime_ms = ctx.counters.uptime_ms();
        // Without /proc/uptime the machine's clock is taken to start with the instance.
        let ms_ticks = machine_uptime_ms().unwrap_or(uptime_ms).max(uptime_ms);
        let (user_ms, kernel_ms) = process_times_ms().unwrap_or((0, 0));
        SysInfo {
            cpus,
            sockets,
            cores_per_socket: cores.unwrap_or((cpus / sockets).max(1)),
            numa_nodes: numa_nodes(),
            physical_kb: physical_memory_kb().unwrap_or(0),
            committed_kb: committed,
            target_kb: target,
            ms_ticks,
            start_ms_ticks: ms_ticks - uptime_ms,
            start_micros: now_micros().saturating_sub(uptime_ms * 1000),
            kernel_ms,
            user_ms,
            hypervisor,
        }
    }

    /// SQL Server's automatic `max worker threads` for a 64-bit server with this many CPUs.
    fn max_workers(&self) -> i64 {
        let cpus = self.cpus as i64;
        match cpus {
            0..=4 => 512,
            5..=64 => 512 + (cpus - 4) * 16,
            _ => 512 + (cpus - 4) * 32,
        }
    }
}

/// User-mode address space of a 64-bit process with 47-bit user addresses (128 TB), in KB.
const VIRTUAL_MEMORY_KB: u64 = 128 << 30;

/// `sys.dm_os_sys_info`: one row.
pub(super) fn sys_info(ctx: &ViewContext<'_>) -> RowSet {
    let name = |n: u16| SqlType::NVarChar(Len::N(n));
    View::<SysInfo>::new()
        // Walden reads no CPU tick counter: the monotonic milliseconds, in nanoseconds.
        .col("cpu_ticks", SqlType::BigInt, |s| big(s.ms_ticks.saturating_mul(1_000_000)))
        .col("ms_ticks", SqlType::BigInt, |s| big(s.ms_ticks))
        .col("cpu_count", SqlType::Int, |s| int(s.cpus as i64))
        .col("hyperthread_ratio", SqlType::Int, |s| int((s.cpus / s.sockets).max(1) as i64))
        .col("physical_memory_kb", SqlType::BigInt, |s| big(s.physical_kb))
        .col("virtual_memory_kb", SqlType::BigInt, |_| big(VIRTUAL_MEMORY_KB))
        .col("committed_kb", SqlType::BigInt, |s| big(s.committed_kb))
        .col("committed_target_kb", SqlType::BigInt, |s| big(s.target_kb))
        .col("visible_target_kb", SqlType::BigInt, |s| big(s.target_kb))
        // Rust's default thread stack, which Walden's session threads use.
        .col("stack_size_in_bytes", SqlType::Int, |_| int(2 << 20))
        .col("os_quantum", SqlType::BigInt, |_| big(4))
        .col("os_error_mode", SqlType::Int, |_| int(0))
        .opt("os_priority_class", SqlType::Int, |_| int(32))
        .col("max_workers_count", SqlType::Int, |s| int(s.max_workers()))
        .col("scheduler_count", SqlType::Int, |s| int(s.cpus as i64))
        .col("scheduler_total_count", SqlType::Int, |s| int(s.cpus as i64))
        .col("deadlock_monitor_serial_number", SqlType::Int, |_| int(0))
        .col("sqlserver_start_time_ms_ticks", SqlType::BigInt, |s| big(s.start_ms_ticks))
        .col("sqlserver_start_time", SqlType::DateTime, |s| datetime(s.start_micros))
        .col("affinity_type", SqlType::Int, |_| int(2))
        .col("affinity_type_desc", SqlType::VarChar(Len::N(60)), |_| Value::Str("AUTO".into()))
        .col("process_kernel_time_ms", SqlType::BigInt, |s| big(s.kernel_ms))
        .col("process_user_time_ms", SqlType::BigInt, |s| big(s.user_ms))
        .col("time_source", SqlType::Int, |_| int(0))
        .col("time_source_desc", DESC, |_| nstr("QUERY_PERFORMANCE_COUNTER"))
        .col("virtual_machine_type", SqlType::Int, |s| int(i64::from(s.hypervisor)))
        .col("virtual_machine_type_desc", DESC, |s| {
            nstr(if s.hypervisor { "HYPERVISOR" } else { "NONE" })
        })
        .col("softnuma_configuration", SqlType::Int, |_| int(0))
        .col("softnuma_configuration_desc", DESC, |_| nstr("OFF"))
        .col("process_physical_affinity", name(3072), |_| nstr(""))
        .col("sql_memory_model", SqlType::Int, |_| int(1))
        .col("sql_memory_model_desc", name(120), |_| nstr("CONVENTIONAL"))
        .col("socket_count", SqlType::Int, |s| int(s.sockets as i64))
        .col("cores_per_socket", SqlType::Int, |s| int(s.cores_per_socket as i64))
        .col("numa_node_count", SqlType::Int, |s| int(s.numa_nodes as i64))
        .rows([&SysInfo::read(ctx)])
}

/// A fixed principal, server- or database-level.
struct Principal {
    name: &'static str,
    id: i64,
    sid: Option<&'static [u8]>,
    /// SQL Server's one-letter type: `S` login or user, `R` role.
    kind: char,
    kind_desc: &'static str,
    default_schema: Option<&'static str>,
    /// The server principal's default database and language (a login's).
    login_defaults: bool,
    owner: Option<i64>,
    fixed_role: bool,
    /// `sys.database_principals.authentication_type`: 1 INSTANCE (a user of a login), else 0.
    instance_authenticated: bool,
    /// The principal's creation time (the database's or master's).
    created_us: u64,
}

/// The server principals of every SQL Server instance that Walden has: the `sa` login, the
/// `public` role every login is in, and `sysadmin`, the role `sa` is in.
fn server_principals_of(created_us: u64) -> [Principal; 3] {
    let login = Principal {
        name: "sa",
        id: 1,
        sid: Some(&[1]),
        kind: 'S',
        kind_desc: "SQL_LOGIN",
        default_schema: None,
        login_defaults: true,
        owner: None,
        fixed_role: false,
        instance_authenticated: true,
        created_us,
    };
    let role = |name: &'static str, id: i64, sid: &'static [u8], fixed_role: bool| Principal {
        name,
        id,
        sid: Some(sid),
        kind: 'R',
        kind_desc: "SERVER_ROLE",
        default_schema: None,
        login_defaults: false,
        owner: Some(1),
        fixed_role,
        instance_authenticated: false,
        created_us,
    };
    [login, role("public", 2, &[2], false), role("sysadmin", 3, &[3], true)]
}

/// The columns of `sys.server_principals`, which `sys.sql_logins` starts with.
fn server_principal_columns() -> View<Principal> {
    View::<Principal>::new()
        .col("name", SYSNAME, |p| nstr(p.name))
        .col("principal_id", SqlType::Int, |p| int(p.id))
        .opt("sid", SqlType::VarBinary(Len::N(85)), |p| {
            p.sid.map_or(Value::Null, |s| Value::Binary(s.to_vec()))
        })
        .col("type", SqlType::Char(1), |p| Value::Str(p.kind.to_string()))
        .opt("type_desc", DESC, |p| nstr(p.kind_desc))
        .opt("is_disabled", SqlType::Int, |_| int(0))
        .col("create_date", SqlType::DateTime, |p| datetime(p.created_us))
        .col("modify_date", SqlType::DateTime, |p| datetime(p.created_us))
        .opt("default_database_name", SYSNAME, |p| {
            if p.login_defaults {
                nstr("master")
            } else {
                Value::Null
            }
        })
        .opt("default_language_name", SYSNAME, |p| {
            if p.login_defaults {
                nstr("us_english")
            } else {
                Value::Null
            }
        })
        .opt("credential_id", SqlType::Int, |_| Value::Null)
        .opt("owning_principal_id", SqlType::Int, |p| p.owner.map_or(Value::Null, int))
        .col("is_fixed_role", SqlType::Bit, |p| bit(p.fixed_role))
}

/// master's creation time, the server principals' creation time.
fn master_created(ctx: &ViewContext<'_>) -> u64 {
    created_micros(ctx.instance.master())
}

/// `sys.server_principals`: `sa`, `public` and `sysadmin`.
pub(super) fn server_principals(ctx: &ViewContext<'_>) -> RowSet {
    server_principal_columns().rows(&server_principals_of(master_created(ctx)))
}

/// `sys.sql_logins`: the `sa` login. Walden checks no password policy and does not show its
/// password's hash.
pub(super) fn sql_logins(ctx: &ViewContext<'_>) -> RowSet {
    let principals = server_principals_of(master_created(ctx));
    server_principal_columns()
        .opt("is_policy_checked", SqlType::Bit, |_| bit(false))
        .opt("is_expiration_checked", SqlType::Bit, |_| bit(false))
        .opt("password_hash", SqlType::VarBinary(Len::N(256)), |_| Value::Null)
        .rows(principals.iter().filter(|p| p.kind == 'S'))
}

/// `sys.syslogins` (also `syslogins`, `master..syslogins`): SQL Server 2000's view of the
/// logins, `sa` alone, a member of sysadmin.
pub(super) fn syslogins(ctx: &ViewContext<'_>) -> RowSet {
    let principals = server_principals_of(master_created(ctx));
    let mut view = View::<Principal>::new()
        .opt("sid", SqlType::VarBinary(Len::N(85)), |p| {
            p.sid.map_or(Value::Null, |s| Value::Binary(s.to_vec()))
        })
        .opt("status", SqlType::SmallInt, |_| small(9))
        .col("createdate", SqlType::DateTime, |p| datetime(p.created_us))
        .col("updatedate", SqlType::DateTime, |p| datetime(p.created_us))
        .col("accdate", SqlType::DateTime, |p| datetime(p.created_us))
        .opt("totcpu", SqlType::Int, |_| int(0))
        .opt("totio", SqlType::Int, |_| int(0))
        .opt("spacelimit", SqlType::Int, |_| int(0))
        .opt("timelimit", SqlType::Int, |_| int(0))
        .opt("resultlimit", SqlType::Int, |_| int(0))
        .col("name", SYSNAME, |p| nstr(p.name))
        .col("dbname", SYSNAME, |_| nstr("master"))
        .opt("password", SYSNAME, |_| Value::Null)
        .col("language", SYSNAME, |_| nstr("us_english"))
        .opt("denylogin", SqlType::Int, |_| int(0))
        .opt("hasaccess", SqlType::Int, |_| int(1))
        .opt("isntname", SqlType::Int, |_| int(0))
        .opt("isntgroup", SqlType::Int, |_| int(0))
        .opt("isntuser", SqlType::Int, |_| int(0))
        .opt("sysadmin", SqlType::Int, |_| int(1));
    for role in
        ["securityadmin", "serveradmin", "setupadmin", "processadmin", "diskadmin", "dbcreator"]
    {
        view = view.opt(role, SqlType::Int, |_| int(0));
    }
    view.opt("bulkadmin", SqlType::Int, |_| int(0))
        .col("loginname", SYSNAME, |p| nstr(p.name))
        .rows(principals.iter().filter(|p| p.kind == 'S'))
}

/// `sys.database_principals`: the fixed principals of every database: the `public` role,
/// the `dbo`, `guest`, `INFORMATION_SCHEMA` and `sys` users, and the `db_owner` role.
pub(super) fn database_principals(ctx: &ViewContext<'_>) -> RowSet {
    let rows = principals(ctx);
    View::<Principal>::new()
        .col("name", SYSNAME, |p| nstr(p.name))
        .col("principal_id", SqlType::Int, |p| int(p.id))
        .col("type", SqlType::Char(1), |p| Value::Str(p.kind.to_string()))
        .opt("type_desc", DESC, |p| nstr(p.kind_desc))
        .opt("default_schema_name", SYSNAME, |p| p.default_schema.map_or(Value::Null, nstr))
        .col("create_date", SqlType::DateTime, |p| datetime(p.created_us))
        .col("modify_date", SqlType::DateTime, |p| datetime(p.created_us))
        .opt("owning_principal_id", SqlType::Int, |p| p.owner.map_or(Value::Null, int))
        .opt("sid", SqlType::VarBinary(Len::N(85)), |p| {
            p.sid.map_or(Value::Null, |s| Value::Binary(s.to_vec()))
        })
        .col("is_fixed_role", SqlType::Bit, |p| bit(p.fixed_role))
        .col("authentication_type", SqlType::Int, |p| int(i64::from(p.instance_authenticated)))
        .col("authentication_type_desc", DESC, |p| {
            nstr(if p.instance_authenticated { "INSTANCE" } else { "NONE" })
        })
        .opt("default_language_name", SYSNAME, |_| Value::Null)
        .opt("default_language_lcid", SqlType::Int, |_| Value::Null)
        .col("allow_encrypted_value_modifications", SqlType::Bit, |_| bit(false))
        .rows(&rows)
}

/// `sys.sysusers` (also `dbo.sysusers`), SQL Server 2000's view of the database's users and
/// roles, which old scripts join to `sys.database_role_members` by `uid`: the principals of
/// `sys.database_principals`, with `uid` their `principal_id`.
pub(super) fn sysusers(ctx: &ViewContext<'_>) -> RowSet {
    let rows = principals(ctx);
    View::<Principal>::new()
        .opt("uid", SqlType::SmallInt, |p| small(p.id))
        .opt("status", SqlType::SmallInt, |p| small(if p.kind == 'R' { 0 } else { 2 }))
        .col("name", SYSNAME, |p| nstr(p.name))
        .opt("sid", SqlType::VarBinary(Len::N(85)), |p| {
            p.sid.map_or(Value::Null, |s| Value::Binary(s.to_vec()))
        })
        .opt("roles", SqlType::VarBinary(Len::N(2048)), |_| Value::Null)
        .col("createdate", SqlType::DateTime, |p| datetime(p.created_us))
        .col("updatedate", SqlType::DateTime, |p| datetime(p.created_us))
        .opt("altuid", SqlType::SmallInt, |p| p.owner.map_or(Value::Null, small))
        .opt("password", SqlType::VarBinary(Len::N(256)), |_| Value::Null)
        .opt("gid", SqlType::SmallInt, |p| small(if p.kind == 'R' { p.id } else { 0 }))
        .opt("environ", SqlType::VarChar(Len::N(255)), |_| Value::Null)
        .opt("hasdbaccess", SqlType::Int, |p| int(i64::from(p.kind != 'R' && p.id == 1)))
        .opt("islogin", SqlType::Int, |p| int(i64::from(p.kind != 'R' && p.sid.is_some())))
        .opt("isntname", SqlType::Int, |_| int(0))
        .opt("isntgroup", SqlType::Int, |_| int(0))
        .opt("isntuser", SqlType::Int, |_| int(0))
        .opt("issqluser", SqlType::Int, |p| int(i64::from(p.kind == 'S')))
        .opt("isaliased", SqlType::Int, |_| int(0))
        .opt("issqlrole", SqlType::Int, |p| int(i64::from(p.kind == 'R')))
        .opt("isapprole", SqlType::Int, |_| int(0))
        .rows(&rows)
}

/// The database's principals: its fixed users and roles (Walden has no CREATE USER).
fn principals(ctx: &ViewContext<'_>) -> Vec<Principal> {
    let created_us = created_micros(ctx.database);
    let principal = |name: &'static str,
                     id: i64,
                     sid: Option<&'static [u8]>,
                     kind: char,
                     default_schema: Option<&'static str>,
                     owner: Option<i64>| Principal {
        name,
        id,
        sid,
        kind,
        kind_desc: if kind == 'R' { "DATABASE_ROLE" } else { "SQL_USER" },
        default_schema,
        login_defaults: false,
        owner,
        fixed_role: id >= 16384,
        instance_authenticated: id == 1,
        created_us,
    };
    let rows = [
        principal("public", 0, None, 'R', None, Some(1)),
        principal("dbo", 1, Some(&[1]), 'S', Some("dbo"), None),
        principal("guest", 2, Some(&[0]), 'S', Some("guest"), None),
        principal("INFORMATION_SCHEMA", 3, None, 'S', None, None),
        principal("sys", 4, None, 'S', None, None),
        principal("db_owner", 16384, None, 'R', None, Some(1)),
    ];
    Vec::from(rows)
}

/// A server option as `sys.configurations` lists it.
pub(crate) struct ConfigOption {
    pub(crate) id: i64,
    pub(crate) name: &'static str,
    minimum: i64,
    maximum: i64,
    /// The value: Walden's where the SQL layer knows it, else SQL Server's default.
    value: fn(&ViewContext<'_>) -> i64,
    description: &'static str,
    is_dynamic: bool,
    pub(crate) is_advanced: bool,
}

/// `max_server_memory_mb`: the capacity of the buffer pool every database shares, in MB.
fn buffer_pool_mb(ctx: &ViewContext<'_>) -> i64 {
    let bytes = ctx.instance.frame_pool().capacity() as u64 * super::PAGE_BYTES;
    i64::try_from(bytes >> 20).unwrap_or(i64::MAX)
}

/// The options `sys.configurations` and `sp_configure` show, by configuration id, with SQL
/// Server's ids, ranges, descriptions and flags. All are read-only in Walden.
pub(crate) const CONFIGURATIONS: [ConfigOption; 12] = [
    ConfigOption {
        id: 103,
        name: "user connections",
        minimum: 0,
        maximum: 32767,
        // 0, SQL Server's "as many as needed": the server's limit is not known to the SQL
        // layer.
        value: |_| 0,
        description: "Number of user connections allowed",
        is_dynamic: false,
        is_advanced: true,
    },
    ConfigOption {
        id: 117,
        name: "remote access",
        minimum: 0,
        maximum: 1,
        value: |_| 1,
        description: "Allow remote access",
        is_dynamic: false,
        is_advanced: false,
    },
    ConfigOption {
        id: 503,
        name: "max worker threads",
        minimum: 128,
        maximum: 65535,
        value: |_| 0,
        description: "Maximum worker threads",
        is_dynamic: true,
        is_advanced: true,
    },
    ConfigOption {
        id: 518,
        name: "show advanced options",
        minimum: 0,
        maximum: 1,
        value: |c| i64::from(c.counters.show_advanced()),
        description: "show advanced options",
        is_dynamic: true,
        is_advanced: false,
    },
    ConfigOption {
        id: 1538,
        name: "cost threshold for parallelism",
        minimum: 0,
        maximum: 32767,
        value: |_| 5,
        description: "cost threshold for parallelism",
        is_dynamic: true,
        is_advanced: true,
    },
    ConfigOption {
        id: 1539,
        name: "max degree of parallelism",
        minimum: 0,
        maximum: 32767,
        // Every query runs on one thread: SQL Server's MAXDOP 1.
        value: |_| 1,
        description: "maximum degree of parallelism",
        is_dynamic: true,
        is_advanced: true,
    },
    ConfigOption {
        id: 1543,
        name: "min server memory (MB)",
        minimum: 0,
        maximum: 2_147_483_647,
        value: |_| 0,
        description: "Minimum size of server memory (MB)",
        is_dynamic: true,
        is_advanced: true,
    },
    ConfigOption {
        id: 1544,
        name: "max server memory (MB)",
        minimum: 128,
        maximum: 2_147_483_647,
        value: buffer_pool_mb,
        description: "Maximum size of server memory (MB)",
        is_dynamic: true,
        is_advanced: true,
    },
    ConfigOption {
        id: 1562,
        name: "clr enabled",
        minimum: 0,
        maximum: 1,
        value: |_| 0,
        description: "CLR user code execution enabled in the server",
        is_dynamic: true,
        is_advanced: false,
    },
    ConfigOption {
        id: 1579,
        name: "backup compression default",
        minimum: 0,
        maximum: 1,
        value: |_| 0,
        description: "Enable compression of backups by default",
        is_dynamic: true,
        is_advanced: false,
    },
    ConfigOption {
        id: 1581,
        name: "optimize for ad hoc workloads",
        minimum: 0,
        maximum: 1,
        value: |_| 0,
        description: "When this option is set, plan cache size is further reduced for \
                      single-use adhoc OLTP workload.",
        is_dynamic: true,
        is_advanced: true,
    },
    ConfigOption {
        id: 16390,
        name: "xp_cmdshell",
        minimum: 0,
        maximum: 1,
        value: |_| 0,
        description: "Enable or disable command shell",
        is_dynamic: true,
        is_advanced: true,
    },
];

/// `sys.configurations`. SQL Server's value columns are `sql_variant`; Walden has no
/// `sql_variant`, and every value of these options is an INT. `value` and `value_in_use` are
/// equal: nothing is pending a RECONFIGURE.
pub(super) fn configurations(ctx: &ViewContext<'_>) -> RowSet {
    let rows: Vec<(&ConfigOption, i64)> =
        CONFIGURATIONS.iter().map(|o| (o, (o.value)(ctx))).collect();
    View::<(&ConfigOption, i64)>::new()
        .col("configuration_id", SqlType::Int, |(o, _)| int(o.id))
        .col("name", SqlType::NVarChar(Len::N(35)), |(o, _)| nstr(o.name))
        .opt("value", SqlType::Int, |(_, v)| int(*v))
        .opt("minimum", SqlType::Int, |(o, _)| int(o.minimum))
        .opt("maximum", SqlType::Int, |(o, _)| int(o.maximum))
        .opt("value_in_use", SqlType::Int, |(_, v)| int(*v))
        .col("description", SqlType::NVarChar(Len::N(255)), |(o, _)| nstr(o.description))
        .col("is_dynamic", SqlType::Bit, |(o, _)| bit(o.is_dynamic))
        .col("is_advanced", SqlType::Bit, |(o, _)| bit(o.is_advanced))
        .rows(&rows)
}

/// `text` blank-padded to `n` characters, as SQL Server's NCHAR(n) columns hold it.
fn nchar(text: &str, n: usize) -> Value {
    let mut s: String = text.chars().take(n).collect();
    let len = s.chars().count();
    s.extend(std::iter::repeat_n(' ', n - len));
    Value::NStr(s)
}

/// `bytes` zero-padded to `n`, as SQL Server's BINARY(n) columns hold them.
fn binary(bytes: &[u8], n: usize) -> Value {
    let mut b = bytes[..bytes.len().min(n)].to_vec();
    b.resize(n, 0);
    Value::Binary(b)
}

/// A session as `sys.sysprocesses` shows it: with its running request's lock wait.
struct ProcessRow {
    session: SessionRow,
    wait: Option<walden_engine::lock::LockInfo>,
    blocker: u16,
}

impl ProcessRow {
    fn status(&self) -> &'static str {
        match (self.session.running(), self.wait.is_some()) {
            (false, _) => "sleeping",
            (true, true) => "suspended",
            (true, false) => "runnable",
        }
    }
}

/// `sys.sysprocesses`: one row per session, from the registry `sys.dm_exec_sessions` reads,
/// with what `sys.dm_exec_requests` shows of its running batch. Counters Walden does not keep
/// per session (CPU, I/O, memory) are 0, and its columns are padded as SQL Server's
/// fixed-length ones are.
pub(super) fn sysprocesses(ctx: &ViewContext<'_>) -> RowSet {
    let locks = ctx.instance.locks().snapshot();
    let rows: Vec<ProcessRow> = rows_of(ctx)
        .into_iter()
        .map(|session| {
            let (wait, blocker) =
                if session.running() { lock_wait(&locks, session.a.spid()) } else { (None, 0) };
            ProcessRow { session, wait, blocker }
        })
        .collect();
    View::<ProcessRow>::new()
        .col("spid", SqlType::SmallInt, |r| small(r.session.a.spid().into()))
        .col("kpid", SqlType::SmallInt, |_| small(0))
        .col("blocked", SqlType::SmallInt, |r| small(r.blocker.into()))
        .col("waittype", SqlType::Binary(2), |_| binary(&[], 2))
        .col("waittime", SqlType::BigInt, |r| {
            big(r.wait.as_ref().map_or(0, |w| w.waited.as_millis() as u64))
        })
        .col("lastwaittype", SqlType::NChar(32), |r| {
            nchar(r.wait.as_ref().map_or("MISCELLANEOUS", |w| lock_wait_type(w.mode.name())), 32)
        })
        .col("waitresource", SqlType::NChar(256), |r| {
            nchar(&r.wait.as_ref().map_or_else(String::new, wait_resource), 256)
        })
        .col("dbid", SqlType::SmallInt, |r| {
            small(r.session.a.database_id.load(Ordering::Relaxed).into())
        })
        .col("uid", SqlType::SmallInt, |_| small(1))
        .col("cpu", SqlType::Int, |_| int(0))
        .col("physical_io", SqlType::BigInt, |_| big(0))
        .col("memusage", SqlType::Int, |_| int(0))
        .col("login_time", SqlType::DateTime, |r| datetime(r.session.a.login_micros))
        .col("last_batch", SqlType::DateTime, |r| {
            datetime(r.session.a.request_start_micros().max(r.session.a.login_micros))
        })
        .col("ecid", SqlType::SmallInt, |_| small(0))
        .col("open_tran", SqlType::SmallInt, |r| {
            small(r.session.a.open_transactions.load(Ordering::Relaxed).into())
        })
        .col("status", SqlType::NChar(30), |r| nchar(r.status(), 30))
        .col("sid", SqlType::Binary(86), |_| binary(&[1], 86))
        .col("hostname", SqlType::NChar(128), |r| nchar(&r.session.client.host, 128))
        .col("program_name", SqlType::NChar(128), |r| nchar(&r.session.client.program, 128))
        .col("hostprocess", SqlType::NChar(10), |r| {
            nchar(&r.session.client.process_id.map_or_else(String::new, |p| p.to_string()), 10)
        })
        .col("cmd", SqlType::NChar(16), |r| nchar(r.session.a.command_name(), 16))
        .col("nt_domain", SqlType::NChar(128), |_| nchar("", 128))
        .col("nt_username", SqlType::NChar(128), |_| nchar("", 128))
        .col("net_address", SqlType::NChar(12), |_| nchar("", 12))
        .col("net_library", SqlType::NChar(12), |r| {
            nchar(if conn_of(&r.session).is_some() { "TCP/IP" } else { "LPC" }, 12)
        })
        .col("loginame", SqlType::NChar(128), |r| nchar(&r.session.client.login, 128))
        .col("context_info", SqlType::Binary(128), |_| binary(&[], 128))
        // The running batch's (or module's) handle, zero-padded to BINARY(20): what
        // `sys.dm_exec_sql_text` takes (sp_WhoIsActive reads the text through it).
        .col("sql_handle", SqlType::Binary(20), |r| match r.session.a.request_handle_value() {
            Value::Binary(h) if r.session.running() => binary(&h, 20),
            _ => binary(&[], 20),
        })
        .col("stmt_start", SqlType::Int, |_| int(0))
        .col("stmt_end", SqlType::Int, |_| int(0))
        .col("request_id", SqlType::Int, |_| int(0))
        .rows(&rows)
}

/// `sys.database_role_members`: dbo, the database's owner, in `db_owner` (16384), as in every
/// SQL Server database; every session is `sa`, mapped to dbo.
pub(super) fn database_role_members(_ctx: &ViewContext<'_>) -> RowSet {
    View::<(i64, i64)>::new()
        .col("role_principal_id", SqlType::Int, |r| int(r.0))
        .col("member_principal_id", SqlType::Int, |r| int(r.1))
        .rows(&[(16384, 1)])
}

/// `sys.database_permissions`: none granted or denied (Walden has no permissions to grant:
/// every session is `sa`).
pub(super) fn database_permissions(_ctx: &ViewContext<'_>) -> RowSet {
    View::<()>::new()
        .col("class", SqlType::TinyInt, |_| Value::Null)
        .opt("class_desc", DESC, |_| Value::Null)
        .col("major_id", SqlType::Int, |_| Value::Null)
        .col("minor_id", SqlType::Int, |_| Value::Null)
        .col("grantee_principal_id", SqlType::Int, |_| Value::Null)
        .col("grantor_principal_id", SqlType::Int, |_| Value::Null)
        .col("type", SqlType::Char(4), |_| Value::Null)
        .opt("permission_name", SqlType::NVarChar(Len::N(128)), |_| Value::Null)
        .col("state", SqlType::Char(1), |_| Value::Null)
        .opt("state_desc", DESC, |_| Value::Null)
        .rows(&[])
}

/// `sys.server_permissions`: the server-level grants. The one login, `sa`, holds `CONNECT
/// SQL` (granted by itself, as SQL Server shows a login's own); what it may do beyond that
/// comes from its sysadmin membership, which is not a permission row.
pub(super) fn server_permissions(_ctx: &ViewContext<'_>) -> RowSet {
    View::<()>::new()
        .col("class", SqlType::TinyInt, |_| Value::TinyInt(100))
        .opt("class_desc", DESC, |_| nstr("SERVER"))
        .col("major_id", SqlType::Int, |_| int(0))
        .col("minor_id", SqlType::Int, |_| int(0))
        .col("grantee_principal_id", SqlType::Int, |_| int(1))
        .col("grantor_principal_id", SqlType::Int, |_| int(1))
        .col("type", SqlType::Char(4), |_| Value::Str("COSQ".into()))
        .opt("permission_name", SqlType::NVarChar(Len::N(128)), |_| nstr("CONNECT SQL"))
        .col("state", SqlType::Char(1), |_| Value::Str("G".into()))
        .opt("state_desc", DESC, |_| nstr("GRANT"))
        .rows(&[()])
}

/// `sys.database_mirroring`: a row per database, none of them mirrored (the columns a client
/// reads to learn that; the other mirroring columns are NULL too in SQL Server).
pub(super) fn database_mirroring(ctx: &ViewContext<'_>) -> RowSet {
    let ids: Vec<i64> = ctx.instance.databases().iter().map(|d| i64::from(d.id())).collect();
    let null = |_: &i64| Value::Null;
    View::<i64>::new()
        .col("database_id", SqlType::Int, |id| int(*id))
        .opt("mirroring_guid", SqlType::UniqueIdentifier, null)
        .opt("mirroring_state", SqlType::TinyInt, null)
        .opt("mirroring_state_desc", DESC, null)
        .opt("mirroring_role", SqlType::TinyInt, null)
        .opt("mirroring_role_desc", DESC, null)
        .opt("mirroring_partner_name", SqlType::NVarChar(Len::N(128)), null)
        .opt("mirroring_partner_instance", SqlType::NVarChar(Len::N(128)), null)
        .opt("mirroring_witness_name", SqlType::NVarChar(Len::N(128)), null)
        .rows(&ids)
}

/// `sys.dm_os_host_info`: the operating system the server runs on, as SQL Server on Linux
/// reports it (tools read `host_platform` when they connect).
pub(super) fn host_info(_ctx: &ViewContext<'_>) -> RowSet {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let distribution = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "Linux".to_string());
    let release = read("/proc/sys/kernel/osrelease").trim().to_string();
    let row = (distribution, release);
    View::<(String, String)>::new()
        .col("host_platform", SqlType::NVarChar(Len::N(256)), |_| nstr("Linux"))
        .col("host_distribution", SqlType::NVarChar(Len::N(256)), |r| nstr(r.0.as_str()))
        .col("host_release", SqlType::NVarChar(Len::N(256)), |r| nstr(r.1.as_str()))
        .col("host_service_pack_level", SqlType::NVarChar(Len::N(256)), |_| nstr(""))
        .opt("host_sku", SqlType::Int, |_| Value::Null)
        .col("os_language_version", SqlType::Int, |_| int(1033))
        .col("host_architecture", SqlType::NVarChar(Len::N(256)), |_| {
            nstr(if cfg!(target_arch = "aarch64") { "ARM64" } else { "X64" })
        })
        .rows(&[row])
}

/// `sys.dm_db_index_usage_stats`: no rows (Walden does not count index use).
pub(super) fn index_usage_stats(_ctx: &ViewContext<'_>) -> RowSet {
    let mut view = View::<()>::new()
        .col("database_id", SqlType::SmallInt, |_| Value::Null)
        .col("object_id", SqlType::Int, |_| Value::Null)
        .col("index_id", SqlType::Int, |_| Value::Null);
    for counter in ["user_seeks", "user_scans", "user_lookups", "user_updates"] {
        view = view.col(counter, SqlType::BigInt, |_| Value::Null);
    }
    for when in ["last_user_seek", "last_user_scan", "last_user_lookup", "last_user_update"] {
        view = view.opt(when, SqlType::DateTime, |_| Value::Null);
    }
    view.rows(&[])
}

/// `sys.dm_broker_activated_tasks`: the stored procedures Service Broker started. Walden has
/// no Service Broker, so there are none (sp_WhoIsActive joins this view to mark its tasks).
pub(super) fn broker_activated_tasks() -> RowSet {
    View::<()>::new()
        .col("spid", SqlType::Int, |_| Value::Null)
        .col("database_id", SqlType::SmallInt, |_| Value::Null)
        .col("queue_id", SqlType::Int, |_| Value::Null)
        .col("procedure_name", SqlType::NVarChar(Len::N(650)), |_| Value::Null)
        .col("execute_as", SqlType::Int, |_| Value::Null)
        .rows(&[])
}

/// `sys.dm_os_server_diagnostics_log_configurations`: where SQL Server writes its diagnostics
/// logs, which maintenance scripts also take as the directory for their own log files. Walden
/// writes no such logs; the directory given is the instance's, where its files are.
pub(super) fn diagnostics_log_configurations(ctx: &ViewContext<'_>) -> RowSet {
    let dir = ctx.instance.dir().display().to_string();
    View::<String>::new()
        .col("is_enabled", SqlType::Bit, |_| Value::Bit(false))
        .col("path", SqlType::NVarChar(Len::N(260)), |d| nstr(d.as_str()))
        .col("max_files", SqlType::Int, |_| int(0))
        .col("max_size", SqlType::Int, |_| int(0))
        .rows(&[dir])
}
