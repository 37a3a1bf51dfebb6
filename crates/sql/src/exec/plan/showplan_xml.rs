//! `SET SHOWPLAN_XML ON`: each batch's statements described in one ShowPlanXML document.
//!
//! As in SQL Server, the statements of a batch run under the option are not run; their
//! estimated plans (the same `PlanNode` trees SHOWPLAN_TEXT and SHOWPLAN_ALL show, see
//! `showplan.rs`) are kept as the batch goes and sent when it ends, as one result of one row
//! and one NVARCHAR(MAX) column named `Microsoft SQL Server 2005 XML Showplan`.
//!
//! The document follows the shape of SQL Server's showplan schema
//! (`http://schemas.microsoft.com/sqlserver/2004/07/showplan`): `ShowPlanXML` / `BatchSequence` /
//! `Batch` / `Statements`, a `StmtSimple` per statement with its text, id and type, and for
//! a statement with a plan a `QueryPlan` of nested `RelOp`s with `NodeId`, `PhysicalOp`,
//! `LogicalOp` and `EstimateRows`, each holding its operator's element (`IndexScan`,
//! `NestedLoops`, `Hash`, `Sort`, ...) around its inputs. The cost attributes SQL Server
//! estimates are 0: Walden's planner ranks plans by rows, not by a cost model. What an
//! operator works on (SHOWPLAN_TEXT's argument) is an XML comment in its element rather
//! than the schema's detailed elements (`Object`, `SeekPredicates`, ...).

use walden_engine::types::{Len, SqlType, Value};

use crate::exec::output::ColumnInfo;
use crate::exec::plan::showplan::PlanNode;

/// The namespace of SQL Server's showplan schema.
const NAMESPACE: &str = "http://schemas.microsoft.com/sqlserver/2004/07/showplan";

/// The name of the result's one column, as SQL Server names it.
pub(crate) const COLUMN: &str = "Microsoft SQL Server 2005 XML Showplan";

/// One statement of the batch, with its plan if it has one.
#[derive(Debug)]
pub(crate) struct PlannedStatement {
    pub(crate) text: String,
    pub(crate) statement_type: &'static str,
    pub(crate) plan: Option<PlanNode>,
}

/// The result's column.
pub(crate) fn column() -> ColumnInfo {
    ColumnInfo::new(COLUMN, SqlType::NVarChar(Len::Max))
}

/// The document describing `statements`.
pub(crate) fn document(statements: &[PlannedStatement]) -> Value {
    let (major, minor, build) = crate::exec::eval::PRODUCT_VERSION;
    let mut xml = format!(
        "<ShowPlanXML xmlns=\"{NAMESPACE}\" \
         Version=\"1.564\" Build=\"{major}.{minor}.{build}.0\"><BatchSequence><Batch><Statements>"
    );
    for (i, st) in statements.iter().enumerate() {
        let rows = st.plan.as_ref().map_or(0.0, PlanNode::estimated_rows);
        xml.push_str(&format!(
            "<StmtSimple StatementText=\"{}\" StatementId=\"{}\" StatementCompId=\"{}\" \
             StatementType=\"{}\" StatementEstRows=\"{}\" StatementSubTreeCost=\"0\">",
            escape(&st.text),
            i + 1,
            i + 1,
            st.statement_type,
            number(rows)
        ));
        if let Some(plan) = &st.plan {
            xml.push_str("<QueryPlan>");
            let mut next_id = 0;
            rel_op(plan, &mut next_id, &mut xml);
            xml.push_str("</QueryPlan>");
        }
        xml.push_str("</StmtSimple>");
    }
    xml.push_str("</Statements></Batch></BatchSequence></ShowPlanXML>");
    Value::NStr(xml)
}

/// `node` and its inputs as nested `RelOp`s, numbered in tree order from `next_id`.
fn rel_op(node: &PlanNode, next_id: &mut usize, xml: &mut String) {
    let id = *next_id;
    *next_id += 1;
    xml.push_str(&format!(
        "<RelOp NodeId=\"{id}\" PhysicalOp=\"{}\" LogicalOp=\"{}\" EstimateRows=\"{}\" \
         EstimateIO=\"0\" EstimateCPU=\"0\" AvgRowSize=\"0\" EstimatedTotalSubtreeCost=\"0\" \
         Parallel=\"0\" EstimateRebinds=\"0\" EstimateRewinds=\"0\"><OutputList/>",
        escape(node.physical()),
        escape(node.logical()),
        number(node.estimated_rows())
    ));
    let element = operator_element(node.physical());
    xml.push_str(&format!("<{element}>"));
    if !node.argument().is_empty() {
        // A comment may not hold "--".
        xml.push_str(&format!("<!-- {} -->", node.argument().replace("--", "- -")));
    }
    for child in node.children() {
        rel_op(child, next_id, xml);
    }
    xml.push_str(&format!("</{element}>"));
    xml.push_str("</RelOp>");
}

/// The showplan schema's element for a physical operator.
fn operator_element(physical: &str) -> &'static str {
    match physical {
        "Clustered Index Scan"
        | "Clustered Index Seek"
        | "Index Scan"
        | "Index Seek"
        | "Key Lookup" => "IndexScan",
        "Table Scan" => "TableScan",
        "Nested Loops" => "NestedLoops",
        "Hash Match" => "Hash",
        "Merge Join" => "Merge",
        "Sort" => "Sort",
        "TopN Sort" => "TopSort",
        "Top" => "Top",
        "Stream Aggregate" => "StreamAggregate",
        "Compute Scalar" => "ComputeScalar",
        "Filter" => "Filter",
        "Concatenation" => "Concat",
        "Constant Scan" => "ConstantScan",
        "Sequence Project" => "SequenceProject",
        "Table-valued function" => "TableValuedFunction",
        _ => "Update",
    }
}

/// An attribute value or text: `&`, `<`, `>` and `"` escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// An estimate as the schema's xsd:double, without needless digits.
fn number(n: f64) -> String {
    let rounded = (n * 1000.0).round() / 1000.0;
    format!("{rounded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_attributes() {
        assert_eq!(escape("a < b & \"c\""), "a &lt; b &amp; &quot;c&quot;");
    }

    #[test]
    fn the_document_is_well_formed_xml_with_one_rel_op_per_operator() {
        let scan =
            PlanNode::new("Clustered Index Scan", "Clustered Index Scan", "a--b".into(), 3.0);
        let filter = PlanNode::unary("Filter", "Filter", "WHERE:(x < 1)".into(), 1.5, scan);
        let statements = [
            PlannedStatement { text: "SELECT 1 <".into(), statement_type: "SELECT", plan: None },
            PlannedStatement {
                text: "SELECT x".into(),
                statement_type: "SELECT",
                plan: Some(filter),
            },
        ];
        let Value::NStr(doc) = document(&statements) else { panic!("not text") };
        crate::exec::scalar::xml::to_xml(Value::NStr(doc.clone()), None).expect("well-formed");
        assert_eq!(doc.matches("<RelOp ").count(), 2);
        assert_eq!(doc.matches("<StmtSimple ").count(), 2);
        assert!(doc.contains("StatementText=\"SELECT 1 &lt;\""));
        assert!(doc.contains("<!-- a- -b -->"));
    }

    #[test]
    fn estimates_keep_three_decimals_at_most() {
        assert_eq!(number(2.0), "2");
        assert_eq!(number(1.23456), "1.235");
    }
}
