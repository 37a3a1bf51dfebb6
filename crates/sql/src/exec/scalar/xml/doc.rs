//! The XML document model, its parser and its serializer.
//!
//! A parsed value is a [`Doc`]: an arena of nodes in document order, node 0 the document node,
//! each element's attributes numbered right after it and before its children. Numbers are
//! stable for a given text, which is what lets a `nodes()` row name its node by number
//! ([`walden_engine::types::Xml::node_of`]).
//!
//! The parser checks well-formedness as SQL Server's does for untyped xml, with its message
//! numbers (9400-9465, 6359): elements nest and close by name, attributes are quoted and
//! unique, entities are the five predefined ones or character references, characters are XML
//! characters, prefixes are declared. A value may be a fragment (several top-level nodes, text
//! among them). As SQL Server does by default (CONVERT style 0), whitespace-only text between
//! markup is dropped unless `xml:space="preserve"` is in scope or style 1 is asked for; the XML
//! declaration and a DOCTYPE without an internal subset are dropped, CDATA sections become
//! text. [`Doc::serialize`] writes the canonical text every stored value holds.

use crate::exec::SqlError;

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Document,
    Element {
        /// The name as written, prefix included.
        name: String,
        /// The namespace URI its prefix (or the default namespace) resolves to; empty for none.
        uri: String,
    },
    Attribute {
        name: String,
        uri: String,
        value: String,
    },
    Text(String),
    Comment(String),
    Instruction {
        target: String,
        data: String,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) parent: u32,
    pub(crate) attributes: Vec<u32>,
    pub(crate) children: Vec<u32>,
}

/// A parsed XML value.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub(crate) nodes: Vec<Node>,
}

/// The local part of a qualified name.
pub(crate) fn local_name(name: &str) -> &str {
    name.rsplit_once(':').map_or(name, |(_, local)| local)
}

impl Doc {
    pub(crate) fn node(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    /// The string value of a node (XPath's): an element's or document's text descendants
    /// concatenated, an attribute's value, a text node's text.
    pub(crate) fn string_value(&self, id: u32) -> String {
        let node = self.node(id);
        match &node.kind {
            Kind::Attribute { value, .. } => value.clone(),
            Kind::Text(t) | Kind::Comment(t) => t.clone(),
            Kind::Instruction { data, .. } => data.clone(),
            Kind::Document | Kind::Element { .. } => {
                let mut out = String::new();
                self.collect_text(id, &mut out);
                out
            }
        }
    }

    fn collect_text(&self, id: u32, out: &mut String) {
        for &c in &self.node(id).children {
            match &self.node(c).kind {
                Kind::Text(t) => out.push_str(t),
                Kind::Element { .. } => self.collect_text(c, out),
                _ => {}
            }
        }
    }

    /// The canonical text of node `id` and its subtree (the document node: all of it).
    pub(crate) fn serialize(&self, id: u32) -> String {
        let mut out = String::new();
        self.write(id, &mut out);
        out
    }

    fn write(&self, id: u32, out: &mut String) {
        let node = self.node(id);
        match &node.kind {
            Kind::Document => node.children.iter().for_each(|&c| self.write(c, out)),
            Kind::Element { name, .. } => {
                out.push('<');
                out.push_str(name);
                for &a in &node.attributes {
                    if let Kind::Attribute { name, value, .. } = &self.node(a).kind {
                        out.push(' ');
                        out.push_str(name);
                        out.push_str("=\"");
                        escape_attribute(value, out);
                        out.push('"');
                    }
                }
                if node.children.is_empty() {
                    out.push_str("/>");
                } else {
                    out.push('>');
                    node.children.iter().for_each(|&c| self.write(c, out));
                    out.push_str("</");
                    out.push_str(name);
                    out.push('>');
                }
            }
            Kind::Attribute { value, .. } => escape_text(value, out),
            Kind::Text(t) => escape_text(t, out),
            Kind::Comment(t) => {
                out.push_str("<!--");
                out.push_str(t);
                out.push_str("-->");
            }
            Kind::Instruction { target, data } => {
                out.push_str("<?");
                out.push_str(target);
                if !data.is_empty() {
                    out.push(' ');
                    out.push_str(data);
                }
                out.push_str("?>");
            }
        }
    }

    /// The namespace URI `prefix` is bound to at element `id` (the empty prefix: the default
    /// namespace), from the `xmlns` attributes of it and its ancestors.
    fn lookup(&self, mut id: u32, prefix: &str) -> Option<String> {
        if prefix == "xml" {
            return Some("http://www.w3.org/XML/1998/namespace".into());
        }
        loop {
            let node = self.node(id);
            for &a in &node.attributes {
                if let Kind::Attribute { name, value, .. } = &self.node(a).kind {
                    let bound = match name.strip_prefix("xmlns") {
                        Some("") => prefix.is_empty(),
                        Some(rest) => rest.strip_prefix(':') == Some(prefix),
                        None => false,
                    };
                    if bound {
                        return Some(value.clone());
                    }
                }
            }
            if id == 0 {
                return prefix.is_empty().then(String::new);
            }
            id = node.parent;
        }
    }
}

/// Text content: `&`, `<`, `>` escaped, and carriage returns as references so that they
/// survive a reparse.
pub(crate) fn escape_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
}

/// An attribute value: as text, with `"` and the whitespace characters a parser would
/// normalize to spaces written as references.
fn escape_attribute(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#x9;"),
            '\n' => out.push_str("&#xA;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
}

/// Whether `c` may appear in an XML document (XML 1.0's `Char`).
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == ':' || (!c.is_ascii() && !c.is_whitespace())
}

fn is_name_char(c: char) -> bool {
    is_name_start(c) || c.is_ascii_digit() || c == '-' || c == '.' || c == '\u{B7}'
}

/// The deepest nesting of elements an xml value may have (SQL Server's 128, error 6335).
const MAX_DEPTH: usize = 128;

/// How a text is being turned into xml.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParseOptions {
    /// CONVERT style 1: keep whitespace-only text.
    pub(crate) preserve_space: bool,
    /// The text came from a national (UTF-16 in SQL Server) string: an XML declaration may
    /// only name a UTF-16 encoding, as SQL Server cannot switch a Unicode string's encoding.
    pub(crate) national: bool,
}

/// Parses `src` into a [`Doc`], or SQL Server's XML parsing error.
pub(crate) fn parse(src: &str, options: ParseOptions) -> Result<Doc, SqlError> {
    let mut p = Parser {
        src,
        pos: 0,
        doc: Doc {
            nodes: vec![Node {
                kind: Kind::Document,
                parent: 0,
                attributes: Vec::new(),
                children: Vec::new(),
            }],
        },
        open: vec![0],
        preserve: vec![options.preserve_space],
        options,
        text: String::new(),
        text_is_data: false,
    };
    p.document()?;
    Ok(p.doc)
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    doc: Doc,
    /// The elements open at the cursor, the document node first.
    open: Vec<u32>,
    /// Whether whitespace-only text is kept in each open element (`xml:space`).
    preserve: Vec<bool>,
    options: ParseOptions,
    /// Character data read since the last markup, not yet a node.
    text: String,
    /// Whether that text holds anything a CDATA section or reference put there (kept even when
    /// it is whitespace).
    text_is_data: bool,
}

impl Parser<'_> {
    /// SQL Server's `XML parsing: line L, character C, what` at byte `at`.
    fn error_at(&self, number: i32, at: usize, what: &str) -> SqlError {
        let before = &self.src[..at.min(self.src.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        SqlError::new(number, format!("XML parsing: line {line}, character {column}, {what}"))
    }

    fn error(&self, number: i32, what: &str) -> SqlError {
        self.error_at(number, self.pos, what)
    }

    fn end_of_input(&self) -> SqlError {
        self.error_at(9400, self.src.len(), "unexpected end of input")
    }

    fn peek(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) -> bool {
        let start = self.pos;
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// Reads up to (not including) `end`, checking characters; 9400 if it never comes.
    fn until(&mut self, end: &str) -> Result<String, SqlError> {
        let Some(n) = self.rest().find(end) else {
            return Err(self.end_of_input());
        };
        let body = &self.src[self.pos..self.pos + n];
        if let Some((i, _)) = body.char_indices().find(|&(_, c)| !is_xml_char(c)) {
            return Err(self.error_at(9420, self.pos + i, "illegal xml character"));
        }
        self.pos += n + end.len();
        Ok(body.to_string())
    }

    fn name(&mut self) -> Result<String, SqlError> {
        let start = self.pos;
        match self.peek() {
            None => return Err(self.end_of_input()),
            Some(c) if is_name_start(c) => {
                self.bump();
            }
            Some(_) => return Err(self.error(9455, "illegal qualified name character")),
        }
        while self.peek().is_some_and(is_name_char) {
            self.bump();
        }
        let name = &self.src[start..self.pos];
        if name.starts_with(':') || name.ends_with(':') || name.matches(':').count() > 1 {
            return Err(self.error_at(9455, start, "illegal qualified name character"));
        }
        Ok(name.to_string())
    }

    fn add(&mut self, kind: Kind) -> u32 {
        let parent = *self.open.last().unwrap_or(&0);
        let id = self.doc.nodes.len() as u32;
        self.doc.nodes.push(Node { kind, parent, attributes: Vec::new(), children: Vec::new() });
        self.doc.nodes[parent as usize].children.push(id);
        id
    }

    /// Makes the pending character data a text node, unless it is whitespace only and
    /// whitespace is not kept here.
    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        let keep = self.text_is_data
            || *self.preserve.last().unwrap_or(&false)
            || !text.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
        self.text_is_data = false;
        if keep {
            self.add(Kind::Text(text));
        }
    }

    fn document(&mut self) -> Result<(), SqlError> {
        self.eat("\u{FEFF}");
        if self.rest().starts_with("<?xml")
            && self.rest()[5..].starts_with([' ', '\t', '\n', '\r', '?'])
        {
            self.declaration()?;
        }
        while self.pos < self.src.len() {
            if self.rest().starts_with('<') {
                self.markup()?;
            } else {
                self.char_data()?;
            }
        }
        self.flush_text();
        if self.open.len() > 1 {
            return Err(self.end_of_input());
        }
        Ok(())
    }

    /// `<?xml version="1.0" encoding="..."?>`: checked and dropped.
    fn declaration(&mut self) -> Result<(), SqlError> {
        let start = self.pos;
        self.pos += 5;
        let body = self.until("?>")?;
        let encoding = body.split_once("encoding").and_then(|(_, rest)| {
            let rest = rest.trim_start().strip_prefix('=')?.trim_start();
            let quote = rest.chars().next().filter(|q| *q == '"' || *q == '\'')?;
            rest[1..].split(quote).next().map(str::to_ascii_lowercase)
        });
        if let Some(encoding) = encoding {
            let unicode = matches!(encoding.as_str(), "utf-16" | "ucs-2" | "utf-16le");
            if unicode != self.options.national {
                let at = start + 5 + body.find("encoding").unwrap_or(0);
                return Err(self.error_at(9402, at, "unable to switch the encoding"));
            }
        }
        Ok(())
    }

    fn markup(&mut self) -> Result<(), SqlError> {
        if self.eat("<!--") {
            self.flush_text();
            let body = self.until("-->")?;
            self.add(Kind::Comment(body));
        } else if self.eat("<![CDATA[") {
            let body = self.until("]]>")?;
            self.text.push_str(&body);
            self.text_is_data = true;
        } else if self.rest().starts_with("<!DOCTYPE") {
            self.doctype()?;
        } else if self.eat("<?") {
            self.flush_text();
            let target = self.name()?;
            if target.eq_ignore_ascii_case("xml") {
                return Err(self.error(9438, "text/xmldecl not at the beginning of input"));
            }
            self.skip_space();
            let data = self.until("?>")?;
            self.add(Kind::Instruction { target, data });
        } else if self.eat("</") {
            self.end_tag()?;
        } else {
            self.pos += 1;
            self.start_tag()?;
        }
        Ok(())
    }

    /// `<!DOCTYPE name ...>`: dropped; an internal subset is refused as SQL Server refuses it
    /// without CONVERT style 2.
    fn doctype(&mut self) -> Result<(), SqlError> {
        let Some(n) = self.rest().find('>') else { return Err(self.end_of_input()) };
        if self.rest()[..n].contains('[') {
            return Err(SqlError::new(
                6359,
                "Parsing XML with internal subset DTDs not allowed. Use CONVERT with style option \
                 2 to enable limited internal subset DTD support.",
            ));
        }
        self.pos += n + 1;
        Ok(())
    }

    fn start_tag(&mut self) -> Result<(), SqlError> {
        self.flush_text();
        let name_at = self.pos;
        let name = self.name()?;
        let element = self.add(Kind::Element { name: name.clone(), uri: String::new() });
        let mut preserve = *self.preserve.last().unwrap_or(&false);
        loop {
            let spaced = self.skip_space();
            match self.peek() {
                None => return Err(self.end_of_input()),
                Some('>') => {
                    self.pos += 1;
                    // The document node and MAX_DEPTH elements: SQL Server's limit, which also
                    // bounds the recursion of serializing and reading the tree.
                    if self.open.len() > MAX_DEPTH {
                        return Err(SqlError::new(
                            6335,
                            "XML datatype instance has too many levels of nested nodes. Maximum allowed depth is 128 levels.",
                        ));
                    }
                    self.open.push(element);
                    self.preserve.push(preserve);
                    break;
                }
                Some('/') => {
                    self.pos += 1;
                    if !self.eat(">") {
                        return Err(self.error(9412, "'>' expected"));
                    }
                    self.open.push(element);
                    self.resolve(element, name_at)?;
                    self.open.pop();
                    return Ok(());
                }
                Some(_) if !spaced => return Err(self.error(9410, "whitespace expected")),
                Some(_) => {
                    let attr_at = self.pos;
                    let attr = self.name()?;
                    self.skip_space();
                    if !self.eat("=") {
                        return Err(self.error(9414, "equal expected"));
                    }
                    self.skip_space();
                    let value = self.attribute_value()?;
                    let duplicate = self.doc.node(element).attributes.iter().any(|&a| {
                        matches!(&self.doc.node(a).kind, Kind::Attribute { name, .. } if *name == attr)
                    });
                    if duplicate {
                        return Err(self.error_at(9465, attr_at, "duplicate attribute"));
                    }
                    if attr == "xml:space" {
                        preserve = value == "preserve";
                    }
                    let id = self.doc.nodes.len() as u32;
                    self.doc.nodes.push(Node {
                        kind: Kind::Attribute { name: attr, uri: String::new(), value },
                        parent: element,
                        attributes: Vec::new(),
                        children: Vec::new(),
                    });
                    self.doc.nodes[element as usize].attributes.push(id);
                }
            }
        }
        self.resolve(element, name_at)
    }

    /// Binds the prefixes of an element and its attributes to their namespaces (9459 for one
    /// not declared).
    fn resolve(&mut self, element: u32, at: usize) -> Result<(), SqlError> {
        let Kind::Element { name, .. } = &self.doc.node(element).kind else { return Ok(()) };
        let prefix = name.split_once(':').map_or("", |(p, _)| p).to_string();
        let uri = self
            .doc
            .lookup(element, &prefix)
            .ok_or_else(|| self.error_at(9459, at, "undeclared prefix"))?;
        if let Kind::Element { uri: u, .. } = &mut self.doc.nodes[element as usize].kind {
            *u = uri;
        }
        for a in self.doc.node(element).attributes.clone() {
            let Kind::Attribute { name, .. } = &self.doc.node(a).kind else { continue };
            let Some((prefix, _)) = name.split_once(':') else { continue };
            if prefix == "xmlns" {
                continue;
            }
            let prefix = prefix.to_string();
            let uri = self
                .doc
                .lookup(element, &prefix)
                .ok_or_else(|| self.error_at(9459, at, "undeclared prefix"))?;
            if let Kind::Attribute { uri: u, .. } = &mut self.doc.nodes[a as usize].kind {
                *u = uri;
            }
        }
        Ok(())
    }

    fn attribute_value(&mut self) -> Result<String, SqlError> {
        let quote = match self.peek() {
            None => return Err(self.end_of_input()),
            Some(q @ ('"' | '\'')) => q,
            Some(_) => return Err(self.error(9413, "A string literal was expected")),
        };
        self.pos += 1;
        let mut value = String::new();
        loop {
            match self.peek() {
                None => return Err(self.end_of_input()),
                Some(c) if c == quote => {
                    self.pos += 1;
                    return Ok(value);
                }
                Some('<') => {
                    return Err(self.error(9415, "well formed check: no '<' in attribute value"))
                }
                Some('&') => value.push_str(&self.reference()?),
                // Attribute-value normalization: whitespace characters become spaces.
                Some('\t' | '\n' | '\r') => {
                    self.pos += 1;
                    value.push(' ');
                }
                Some(c) if !is_xml_char(c) => {
                    return Err(self.error(9420, "illegal xml character"));
                }
                Some(c) => {
                    self.pos += c.len_utf8();
                    value.push(c);
                }
            }
        }
    }

    /// `&name;` or `&#n;` / `&#xh;` at the cursor, as the text it stands for.
    fn reference(&mut self) -> Result<String, SqlError> {
        self.pos += 1;
        if self.eat("#") {
            let hex = self.eat("x");
            let start = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.pos += 1;
            }
            let digits = &self.src[start..self.pos];
            if !self.eat(";") {
                return Err(self.error(9411, "semicolon expected"));
            }
            let code = u32::from_str_radix(digits, if hex { 16 } else { 10 }).ok();
            return match code.and_then(char::from_u32).filter(|&c| is_xml_char(c)) {
                Some(c) => Ok(c.to_string()),
                None => Err(self.error_at(9420, start, "illegal xml character")),
            };
        }
        let start = self.pos;
        if !self.peek().is_some_and(is_name_start) {
            return Err(self.error(9421, "illegal name character"));
        }
        while self.peek().is_some_and(is_name_char) {
            self.bump();
        }
        let name = &self.src[start..self.pos];
        if !self.eat(";") {
            return Err(self.error(9411, "semicolon expected"));
        }
        Ok(match name {
            "amp" => "&",
            "lt" => "<",
            "gt" => ">",
            "quot" => "\"",
            "apos" => "'",
            _ => return Err(self.error_at(9448, start, "well formed check: undeclared entity")),
        }
        .to_string())
    }

    fn end_tag(&mut self) -> Result<(), SqlError> {
        let at = self.pos;
        let name = self.name()?;
        self.skip_space();
        if !self.eat(">") {
            return Err(self.error(9412, "'>' expected"));
        }
        let open = *self.open.last().unwrap_or(&0);
        let matches = match &self.doc.node(open).kind {
            Kind::Element { name: n, .. } => *n == name,
            _ => false,
        };
        if !matches {
            return Err(self.error_at(9436, at, "end tag does not match start tag"));
        }
        self.flush_text();
        self.open.pop();
        self.preserve.pop();
        Ok(())
    }

    fn char_data(&mut self) -> Result<(), SqlError> {
        while let Some(c) = self.peek() {
            match c {
                '<' => break,
                '&' => {
                    let s = self.reference()?;
                    self.text.push_str(&s);
                    self.text_is_data = true;
                }
                c if !is_xml_char(c) => return Err(self.error(9420, "illegal xml character")),
                // A CR LF pair or a lone CR is a line feed (XML's end-of-line handling).
                '\r' => {
                    self.pos += 1;
                    self.eat("\n");
                    self.text.push('\n');
                }
                c => {
                    self.pos += c.len_utf8();
                    self.text.push(c);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        let options = ParseOptions { preserve_space: false, national: false };
        parse(s, options).map(|d| d.serialize(0)).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn canonical_text() {
        assert_eq!(canon("<?xml version=\"1.0\"?><a  x = '1'></a>"), "<a x=\"1\"/>");
        assert_eq!(canon("<a>\n  <b>x &amp; y</b>\n</a>"), "<a><b>x &amp; y</b></a>");
        assert_eq!(canon("t<a/><![CDATA[<z>]]>"), "t<a/>&lt;z&gt;");
        assert_eq!(canon("<a xml:space=\"preserve\"> </a>"), "<a xml:space=\"preserve\"> </a>");
    }

    #[test]
    fn errors_carry_sql_server_numbers() {
        let number = |s: &str| {
            let options = ParseOptions { preserve_space: false, national: false };
            parse(s, options).err().map(|e| e.number)
        };
        assert_eq!(number("<a><b></a>"), Some(9436));
        assert_eq!(number("<a>"), Some(9400));
        assert_eq!(number("<a x=1/>"), Some(9413));
        assert_eq!(number("<\\a>"), Some(9455));
        assert_eq!(number("<a>&bogus;</a>"), Some(9448));
        assert_eq!(number("<p:a/>"), Some(9459));
        assert_eq!(number("<a x='1' x='2'/>"), Some(9465));
    }
}
