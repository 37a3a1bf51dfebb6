//! The extended and undocumented server procedures that DBA scripts run as sysadmin, which
//! report on the machine and on SQL Server Agent: `xp_regread` (the Windows registry),
//! `xp_fixeddrives` (free space per drive) and `sp_MSgetalertinfo` (Agent's fail-safe
//! operator). Walden runs on no registry, describes no volumes (as `sys.dm_os_volume_stats`)
//! and has no Agent, so each reports that nothing is there, with SQL Server's result columns:
//! a script that reads them runs on and reports the value as unknown or not configured.

use walden_engine::types::Value;

use crate::ast::{AssignOp, ExecProcedure, ExprKind};
use crate::exec::session::{Run, Step};

/// `xp_fixeddrives`' result: a drive letter and its free megabytes, no rows.
const XP_FIXEDDRIVES: &str = "SELECT CAST(NULL AS NCHAR(1)) AS drive, \
     CAST(NULL AS INT) AS [MB free] WHERE 1 = 0";

/// `sp_MSgetalertinfo`'s one row: no fail-safe operator, no notification method, no
/// forwarding server, the pager templates unset.
const SP_MSGETALERTINFO: &str = "SELECT CAST(NULL AS NVARCHAR(255)) AS AlertFailSafeOperator, \
     0 AS AlertNotificationMethod, CAST(NULL AS NVARCHAR(255)) AS AlertForwardingServer, \
     0 AS AlertForwardingSeverity, CAST(NULL AS NVARCHAR(255)) AS AlertPagerToTemplate, \
     CAST(NULL AS NVARCHAR(255)) AS AlertPagerCCTemplate, \
     CAST(NULL AS NVARCHAR(255)) AS AlertPagerSubjectTemplate, \
     CAST(NULL AS NVARCHAR(255)) AS AlertPagerSendSubjectOnly, 0 AS AlertForwardAlways";

/// `xp_regread`'s parameters, in order.
const XP_REGREAD_PARAMS: &[&str] = &["@rootkey", "@key", "@value_name", "@value", "@no_output"];

impl Run<'_> {
    /// `xp_fixeddrives`: no drives; return status 0.
    pub(super) fn xp_fixeddrives(&mut self, p: &ExecProcedure) -> Step<i32> {
        self.procedure_arguments("xp_fixeddrives", p, &[])?;
        self.run_system_query(XP_FIXEDDRIVES)?;
        Ok(0)
    }

    /// `sp_MSgetalertinfo [@includeaddresses]`: Agent's alert settings, all unset; return
    /// status 0.
    pub(super) fn sp_msgetalertinfo(&mut self, p: &ExecProcedure) -> Step<i32> {
        self.procedure_arguments("sp_msgetalertinfo", p, &["@includeaddresses"])?;
        self.run_system_query(SP_MSGETALERTINFO)?;
        Ok(0)
    }

    /// `xp_regread @rootkey, @key [, @value_name [, @value OUTPUT [, @no_output]]]`: Walden
    /// has no registry, so no value is found: an OUTPUT `@value` is set to NULL, no result
    /// is sent (so `INSERT ... EXEC xp_regread` inserts nothing, whatever the shape of the
    /// table it fills), and the return status is 1, a read that failed.
    pub(super) fn xp_regread(&mut self, p: &ExecProcedure) -> Step<i32> {
        self.procedure_arguments("xp_regread", p, XP_REGREAD_PARAMS)?;
        let mut output = None;
        for (i, arg) in p.arguments.iter().enumerate() {
            let is_value = match &arg.name {
                Some(n) => n.eq_ignore_ascii_case("@value"),
                None => i == 3,
            };
            if let (true, true, ExprKind::Variable(var)) = (is_value, arg.output, &arg.value.kind) {
                output = Some(var.clone());
            }
        }
        if let Some(var) = output {
            self.assign(&var, AssignOp::Assign, Value::Null)?;
        }
        Ok(1)
    }
}
