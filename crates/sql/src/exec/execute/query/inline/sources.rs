//! Inlining one source of a block: a view, a derived table or an inline
//! table-valued function called with constants and variables (each argument cast to its
//! parameter's type). A source is inlined only if its query is a plain SELECT over tables with
//! inner or cross joins; its tables join the block under hidden aliases, and its WHERE clause
//! is ANDed before the block's.

use std::sync::Arc;

use walden_engine::catalog::Object;
use walden_engine::Database;

use crate::ast::{
    Cast, Expr, ExprKind, FunctionBody, Ident, JoinKind, ObjectName, Query, SelectItem,
    StatementKind, TableSource,
};
use crate::exec::session::Run;
use crate::exec::SqlError;

use super::rewrite::column;
use super::{
    evaluated_once, join_all, named, plain_select, replaced, Inlined, Rewrite, Scope, MAX_DEPTH,
};

impl Run<'_> {
    /// A source of the block being rewritten: inlined where it can be, else kept (with what
    /// is known of its columns). The sources that replace it.
    pub(super) fn outer_source(
        &mut self,
        src: &TableSource,
        db: &Arc<Database>,
        rw: &mut Rewrite,
        scopes: &mut Vec<Scope>,
    ) -> Option<Vec<TableSource>> {
        match src {
            TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
                let left = self.outer_source(&j.left, db, rw, scopes)?;
                let right = self.outer_source(&j.right, db, rw, scopes)?;
                let mut on = j.on.clone();
                if let Some(on) = &mut on {
                    if !rw.expr(on, scopes, false) {
                        return None;
                    }
                }
                Some(vec![join_all(left, right, j.kind, on)?])
            }
            TableSource::Table { name, alias, hints } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                if hints.is_empty() && !self.names_cte(name) {
                    if let Ok((vdb, o)) = self.resolve_relation_object(name) {
                        match &*o {
                            Object::View(v) => {
                                let kept = rw.conjuncts.len();
                                let inlined = self.inline_view(vdb, v, rw, 1);
                                if inlined.is_none() {
                                    // A view that is not inlined leaves none of its WHERE
                                    // clauses behind.
                                    rw.conjuncts.truncate(kept);
                                }
                                if let Some(inl) = inlined {
                                    rw.inlined = true;
                                    return Some(replaced(scopes, qual, inl));
                                }
                            }
                            Object::Table(def) => {
                                let cols = def
                                    .columns
                                    .iter()
                                    .map(|c| {
                                        let parts = vec![
                                            Ident::new(qual.clone()),
                                            Ident::new(c.name.clone()),
                                        ];
                                        (c.name.clone(), column(parts, Default::default()))
                                    })
                                    .collect();
                                scopes.push(Scope {
                                    qual,
                                    cols: Some(cols),
                                    inlined: false,
                                    starrable: true,
                                });
                                return Some(vec![src.clone()]);
                            }
                            _ => {}
                        }
                    }
                }
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: true });
                Some(vec![src.clone()])
            }
            TableSource::Derived { query, alias, columns } => {
                let kept = rw.conjuncts.len();
                let inlined = self
                    .inline_query(query, db, rw, 0, true)
                    .and_then(|mut inl| named(&mut inl.outputs, columns).then_some(inl));
                if inlined.is_none() {
                    rw.conjuncts.truncate(kept);
                }
                match inlined {
                    Some(inl) => {
                        rw.inlined = true;
                        Some(replaced(scopes, alias.value.clone(), inl))
                    }
                    _ => {
                        scopes.push(Scope {
                            qual: alias.value.clone(),
                            cols: None,
                            inlined: false,
                            starrable: true,
                        });
                        Some(vec![src.clone()])
                    }
                }
            }
            TableSource::Variable { name, alias } => {
                let qual = alias.as_ref().map_or(name.clone(), |a| a.value.clone());
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: false });
                Some(vec![src.clone()])
            }
            TableSource::Function { name, args, alias, columns } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                let kept = rw.conjuncts.len();
                match self.inline_function(name, args, columns, rw, 1) {
                    Some(inl) => {
                        rw.inlined = true;
                        return Some(replaced(scopes, qual, inl));
                    }
                    None => rw.conjuncts.truncate(kept),
                }
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: true });
                Some(vec![src.clone()])
            }
            TableSource::Values { alias, .. } => {
                let qual = alias.value.clone();
                scopes.push(Scope { qual, cols: None, inlined: false, starrable: true });
                Some(vec![src.clone()])
            }
            // An outer join, APPLY, PIVOT...: kept whole, its names unknown here.
            _ => {
                scopes.push(Scope {
                    qual: String::new(),
                    cols: None,
                    inlined: false,
                    starrable: false,
                });
                Some(vec![src.clone()])
            }
        }
    }

    /// View `v` of `vdb` inlined, its columns named as the view names them.
    fn inline_view(
        &mut self,
        vdb: Arc<Database>,
        v: &walden_engine::catalog::ViewDef,
        rw: &mut Rewrite,
        depth: usize,
    ) -> Option<Inlined> {
        if depth + self.s.view_depth > MAX_DEPTH {
            return None;
        }
        let batch = self.s.parsed(&v.text).ok()?;
        let def = batch.statements.iter().find_map(|s| match &s.kind {
            StatementKind::CreateView(v) => Some(&**v),
            _ => None,
        })?;
        let mut inl = self.inline_query(&def.query, &vdb, rw, depth, false)?;
        named(&mut inl.outputs, &def.columns).then_some(())?;
        if !def.columns.is_empty() && def.columns.len() != inl.outputs.len() {
            return None;
        }
        Some(inl)
    }

    /// Inline table-valued function `name` called with `args`, inlined as a view is (SQL
    /// Server expands an inline function into its caller the same way), each parameter
    /// replaced by its argument (or its default, for DEFAULT) cast to the parameter's type,
    /// and the columns named by `columns` where given. None where the call is not certain to
    /// mean the same inlined: a function that is not inline, a wrong number of arguments or
    /// a table-valued parameter (the computed call reports 8144, 313, ...), or an argument
    /// other than constants and variables, which the computed call evaluates once and an
    /// inlined one could evaluate per row.
    fn inline_function(
        &mut self,
        name: &ObjectName,
        args: &[Expr],
        columns: &[Ident],
        rw: &mut Rewrite,
        depth: usize,
    ) -> Option<Inlined> {
        if depth + self.s.view_depth > MAX_DEPTH {
            return None;
        }
        let (fdb, def) = self.find_table_function(name).ok()??;
        let batch = self.s.parsed(&def.text).ok()?;
        let f = batch.statements.iter().find_map(|s| match &s.kind {
            StatementKind::CreateFunction(f) => Some(&**f),
            _ => None,
        })?;
        let FunctionBody::InlineTable(query) = &f.body else { return None };
        if args.len() != f.parameters.len() {
            return None;
        }
        let mut params = Vec::with_capacity(args.len());
        for (p, arg) in f.parameters.iter().zip(args) {
            let mut value = match &arg.kind {
                ExprKind::Default => p.default.clone()?,
                _ => arg.clone(),
            };
            // Within an inlined function, the argument names its parameters: replaced first.
            if p.readonly || !evaluated_once(&value) || !rw.expr(&mut value, &[], true) {
                return None;
            }
            let span = value.span;
            let cast = Cast { expr: value, data_type: p.data_type.clone(), is_try: false };
            params.push((p.name.clone(), Expr { kind: ExprKind::Cast(Box::new(cast)), span }));
        }
        rw.params.push(params);
        let inlined = self.inline_query(query, &fdb, rw, depth, false);
        rw.params.pop();
        let mut inl = inlined?;
        named(&mut inl.outputs, columns).then_some(inl)
    }

    /// A view's or derived table's query inlined (in database `db`; `ctes_visible`: the
    /// statement's CTEs are in scope, as they are for a derived table and not for a view),
    /// or None if it is not a plain SELECT over tables.
    fn inline_query(
        &mut self,
        q: &Query,
        db: &Arc<Database>,
        rw: &mut Rewrite,
        depth: usize,
        ctes_visible: bool,
    ) -> Option<Inlined> {
        let sel = plain_select(q)?;
        let mut scopes = Vec::new();
        let mut sources = Vec::new();
        for src in &sel.from {
            sources.extend(self.inner_source(src, db, rw, &mut scopes, depth, ctes_visible)?);
        }
        if let Some(w) = &sel.where_clause {
            let mut w = w.clone();
            if !rw.expr(&mut w, &scopes, true) {
                return None;
            }
            rw.conjuncts.push(w);
        }
        let mut outputs = Vec::new();
        for item in &sel.items {
            match item {
                SelectItem::Wildcard(None) => {
                    for s in &scopes {
                        outputs.extend(s.cols.as_ref()?.iter().cloned());
                    }
                }
                SelectItem::Wildcard(Some(parts)) => {
                    let qual = &parts.last()?.value;
                    let mut matching = scopes.iter().filter(|s| s.qual.eq_ignore_ascii_case(qual));
                    let (Some(s), None) = (matching.next(), matching.next()) else { return None };
                    outputs.extend(s.cols.as_ref()?.iter().cloned());
                }
                SelectItem::Expr { expr, alias } => {
                    let name = alias
                        .as_ref()
                        .map_or_else(|| super::super::expr_name(expr), |a| a.value.clone());
                    let mut e = expr.clone();
                    if !rw.expr(&mut e, &scopes, true) {
                        return None;
                    }
                    outputs.push((name, e));
                }
                SelectItem::Assign { .. } => return None,
            }
        }
        Some(Inlined { sources, outputs })
    }

    /// A source of an inlined query: a table (given a hidden alias), a view or derived table
    /// (inlined in turn), or an inner join of them; None for anything else.
    fn inner_source(
        &mut self,
        src: &TableSource,
        db: &Arc<Database>,
        rw: &mut Rewrite,
        scopes: &mut Vec<Scope>,
        depth: usize,
        ctes_visible: bool,
    ) -> Option<Vec<TableSource>> {
        match src {
            TableSource::Join(j) if matches!(j.kind, JoinKind::Inner | JoinKind::Cross) => {
                let left = self.inner_source(&j.left, db, rw, scopes, depth, ctes_visible)?;
                let right = self.inner_source(&j.right, db, rw, scopes, depth, ctes_visible)?;
                let mut on = j.on.clone();
                if let Some(on) = &mut on {
                    if !rw.expr(on, scopes, true) {
                        return None;
                    }
                }
                Some(vec![join_all(left, right, j.kind, on)?])
            }
            TableSource::Table { name, alias, hints } => {
                if !hints.is_empty() || (ctes_visible && self.names_cte(name)) {
                    return None;
                }
                if name.name.value.starts_with('#') || name.server.is_some() {
                    return None;
                }
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                let (odb, o) = self
                    .in_view_scope(Arc::clone(db), |r| {
                        if r.pseudo_table(name).is_some() {
                            return Err(SqlError::new(50000, "a trigger's table"));
                        }
                        r.resolve_relation_object(name)
                    })
                    .ok()?;
                match &*o {
                    Object::Table(def) => {
                        let hidden = rw.hidden_alias(&qual);
                        let cols = def
                            .columns
                            .iter()
                            .map(|c| {
                                rw.inner_names.insert(c.name.to_lowercase());
                                let parts =
                                    vec![Ident::new(hidden.clone()), Ident::new(c.name.clone())];
                                (c.name.clone(), column(parts, Default::default()))
                            })
                            .collect();
                        scopes.push(Scope {
                            qual,
                            cols: Some(cols),
                            inlined: true,
                            starrable: false,
                        });
                        let table = ObjectName {
                            server: None,
                            database: Some(Ident::new(odb.name())),
                            schema: Some(Ident::new(def.schema.clone())),
                            name: Ident::new(def.name.clone()),
                        };
                        Some(vec![TableSource::Table {
                            name: table,
                            alias: Some(Ident::new(hidden)),
                            hints: Vec::new(),
                        }])
                    }
                    Object::View(v) => {
                        let inl = self.inline_view(odb, v, rw, depth + 1)?;
                        Some(replaced(scopes, qual, inl))
                    }
                    _ => None,
                }
            }
            TableSource::Function { name, args, alias, columns } => {
                let qual = alias.as_ref().unwrap_or(&name.name).value.clone();
                let inl = self.inline_function(name, args, columns, rw, depth + 1)?;
                Some(replaced(scopes, qual, inl))
            }
            TableSource::Derived { query, alias, columns } => {
                let mut inl = self.inline_query(query, db, rw, depth, ctes_visible)?;
                named(&mut inl.outputs, columns).then_some(())?;
                Some(replaced(scopes, alias.value.clone(), inl))
            }
            _ => None,
        }
    }
}
