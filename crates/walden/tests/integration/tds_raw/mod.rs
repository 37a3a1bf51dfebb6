#![allow(clippy::unwrap_used)]
// Test code: a failed unwrap is a failed test.

//! `walden serve` driven with the codec directly, for what tiberius cannot send: an RPC to a
//! procedure by name with an OUTPUT parameter, prepared statements (sp_prepare, sp_execute,
//! sp_prepexec, sp_unprepare), transaction-manager requests, the connection limit, and
//! shutdown on SIGTERM.
//!
//! One module per family of requests; the token helpers they share are here.

use walden_tds::*;

use crate::common;

use common::client::{text, Client};

mod done;
mod metadata;
mod prepared;
mod rpc;
mod session;

fn errors(tokens: &[Token]) -> Vec<String> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Error(m) => Some(m.message.clone()),
            _ => None,
        })
        .collect()
}

/// The tokens as `KIND` or, for the DONE family, `KIND(status bits, CurCmd, count)`: what a
/// client that walks the stream statement by statement relies on.
fn stream(tokens: &[Token]) -> Vec<String> {
    let done = |kind: &str, d: &Done| {
        let mut bits = Vec::new();
        for (bit, name) in [
            (DoneStatus::MORE, "MORE"),
            (DoneStatus::ERROR, "ERROR"),
            (DoneStatus::COUNT, "COUNT"),
            (DoneStatus::ATTN, "ATTN"),
            (DoneStatus::SRVERROR, "SRVERROR"),
        ] {
            if d.status.contains(bit) {
                bits.push(name);
            }
        }
        format!("{kind}({} {:#x} {})", bits.join("|"), d.cur_cmd, d.row_count)
    };
    tokens
        .iter()
        .map(|t| match t {
            Token::ColMetadata(_) => "COLMETADATA".to_string(),
            Token::Row(_) => "ROW".to_string(),
            Token::Info(_) => "INFO".to_string(),
            Token::Error(m) => format!("ERROR {}", m.number),
            Token::Done(d) => done("DONE", d),
            Token::DoneInProc(d) => done("DONEINPROC", d),
            Token::DoneProc(d) => done("DONEPROC", d),
            Token::ReturnStatus(_) => "RETURNSTATUS".to_string(),
            Token::ReturnValue(_) => "RETURNVALUE".to_string(),
            _ => "other".to_string(),
        })
        .collect()
}

/// An `sp_executesql` call of `statement` with `params` declared as `declared`.
fn execute_sql(
    c: &mut Client,
    statement: &str,
    declared: &str,
    params: Vec<RpcParam>,
) -> Vec<Token> {
    let mut all = vec![text(statement), text(declared)];
    all.extend(params);
    c.rpc(ProcId::ExecuteSql, all)
}

fn output(name: &str, ty: TypeInfo, value: TdsValue) -> RpcParam {
    RpcParam { name: name.into(), status: ParamStatus::BY_REF, ty, value }
}

fn returned(tokens: &[Token]) -> Vec<(String, TypeInfo, TdsValue)> {
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::ReturnValue(v) => Some((v.name.clone(), v.ty, v.value.clone())),
            _ => None,
        })
        .collect()
}
