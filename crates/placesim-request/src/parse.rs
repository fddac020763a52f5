//! The cursor parser: text to [`JobRequest`], checking every rule as it goes.

use crate::ast::{
    ChunkSpec, Filter, JobRequest, NodeSet, NodeSetAttributeName, NodeSetPolicyName, Place,
    PlaceArrangement, PlaceSharing, SIZE_UNITS, Select, Term, Value, is_bare_char,
};
use crate::error::{RequestError, RequestErrorKind as K};
use placesim_core::{CmpOp, HostListForm, ResourceDefs, ResourceKind, SpeedValue};

/// Parses a whole request: whitespace-separated `key=value` items, keys `select` (required),
/// `place`, `node_filter`, `nodeset`, `nodesetisoptional`, `nodesetdelay` and `hostlist`, each
/// at most once;
/// or, for `select` and `place`, an old-style `nodes=` converted by PBS's rules
/// ([`crate::convert_nodespec`]).
pub fn parse_request(text: &str, defs: &ResourceDefs) -> Result<JobRequest, RequestError> {
    let mut p = Parser {
        src: text,
        pos: 0,
        defs,
        depth: 0,
    };
    let mut select: Option<(usize, Vec<Select>)> = None;
    let mut place: Option<(usize, Place)> = None;
    let mut node_filter: Option<(usize, Filter)> = None;
    let mut nodeset = None;
    let mut nodeset_is_optional = None;
    let mut nodeset_delay_s = None;
    let mut hostlist = None;
    // An old-style `nodes=` (site-inputs.md §5), converted where it stands.
    let mut nodes_at: Option<usize> = None;
    loop {
        p.skip_ws();
        if p.at_end() {
            break;
        }
        let key_at = p.pos;
        let key = p.name();
        if key.is_empty() {
            return Err(p.err_at(key_at, K::ExpectedKey));
        }
        if !p.eat('=') {
            return Err(p.err(K::Expected("`=` after the key")));
        }
        let dup = |done: bool| {
            if done {
                Err(p.err_at(key_at, K::Duplicate(key.to_owned())))
            } else {
                Ok(())
            }
        };
        match key {
            "select" => {
                if nodes_at.is_some() {
                    return Err(p.err_at(key_at, K::NodesWithSelect));
                }
                dup(select.is_some())?;
                select = Some((key_at, p.select_alternatives()?));
            }
            "place" => {
                if nodes_at.is_some() {
                    return Err(p.err_at(key_at, K::NodesWithSelect));
                }
                dup(place.is_some())?;
                place = Some((key_at, p.place()?));
            }
            "nodes" => {
                dup(nodes_at.is_some())?;
                if select.is_some() || place.is_some() {
                    return Err(p.err_at(key_at, K::NodesWithSelect));
                }
                let value_at = p.pos;
                let value = p.bare_token();
                // The language knows no host names: every name is a property (a boolean the
                // site defines); write `host=` in a select for a host.
                let converted = crate::nodespec::convert_nodespec(
                    value,
                    |_| crate::nodespec::NodeName::Property,
                    defs.lookup("mpiprocs").is_some(),
                )
                .map_err(|e| RequestError {
                    column: e.column + p.src[..value_at].chars().count(),
                    kind: e.kind,
                })?;
                let refused = |why: RequestError| {
                    p.err_at(
                        key_at,
                        K::NodesConverted {
                            select: converted.select.clone(),
                            why: why.kind.to_string(),
                        },
                    )
                };
                let mut sub = Parser {
                    src: &converted.select,
                    pos: 0,
                    defs,
                    depth: 0,
                };
                let chunks = sub.select_alternatives().map_err(refused)?;
                let mut sub = Parser {
                    src: &converted.place,
                    pos: 0,
                    defs,
                    depth: 0,
                };
                let arrangement = sub.place().map_err(refused)?;
                nodes_at = Some(key_at);
                select = Some((key_at, chunks));
                place = Some((key_at, arrangement));
            }
            "node_filter" => {
                dup(node_filter.is_some())?;
                node_filter = Some((key_at, p.node_filter()?));
            }
            "nodeset" => {
                dup(nodeset.is_some())?;
                nodeset = Some(p.nodeset()?);
            }
            "nodesetisoptional" => {
                dup(nodeset_is_optional.is_some())?;
                let at = p.pos;
                let word = p.bare_token();
                nodeset_is_optional = Some(
                    parse_bool(word).ok_or_else(|| p.err_at(at, K::ExpectedBool(word.into())))?,
                );
            }
            "nodesetdelay" => {
                dup(nodeset_delay_s.is_some())?;
                let at = p.pos;
                let word = p.bare_token();
                nodeset_delay_s = Some(
                    parse_duration(word)
                        .ok_or_else(|| p.err_at(at, K::ExpectedDuration(word.into())))?,
                );
            }
            "hostlist" => {
                dup(hostlist.is_some())?;
                hostlist = Some(p.hostlist()?);
            }
            other => return Err(p.err_at(key_at, K::UnknownKey(other.to_owned()))),
        }
        if !p.at_end() && !p.peek().is_some_and(char::is_whitespace) {
            return Err(p.err(K::Expected("a space before the next key, or the end")));
        }
    }
    let Some((_, select)) = select else {
        return Err(p.err_at(0, K::NoSelect));
    };
    let place_v = place.as_ref().map(|(_, pl)| pl.clone()).unwrap_or_default();
    // Cross-item rules, reported where the later-checked item starts.
    if let Some((at, _)) = &place
        && place_v.group.is_some()
        && let Some((filter_at, _)) = &node_filter
    {
        return Err(p.err_at(*filter_at.max(at), K::FilterWithPlaceGroup));
    }
    if let Some((place_at, _)) = &place {
        let per_chunk_group = select
            .iter()
            .flat_map(|s| &s.chunks)
            .any(|c| c.group.is_some());
        if per_chunk_group && place_v.group.is_some() {
            return Err(p.err_at(*place_at, K::ChunkGroupWithPlaceGroup));
        }
        if per_chunk_group && place_v.arrangement == Some(PlaceArrangement::Pack) {
            return Err(p.err_at(*place_at, K::ChunkGroupWithPack));
        }
    }
    Ok(JobRequest {
        select,
        place: place_v,
        node_filter: node_filter.map(|(_, f)| f),
        nodeset,
        nodeset_is_optional,
        nodeset_delay_s,
        hostlist,
    })
}

/// Parses a Moab node-set specification on its own (`ONEOF:FEATURE:a,b`), as a class's
/// `DEFAULT.NODESET` gives it.
pub fn parse_nodeset(text: &str, defs: &ResourceDefs) -> Result<NodeSet, RequestError> {
    let mut p = Parser {
        src: text,
        pos: 0,
        defs,
        depth: 0,
    };
    let ns = p.nodeset()?;
    if !p.at_end() {
        return Err(p.err(K::Expected("the end of the node-set specification")));
    }
    Ok(ns)
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
    defs: &'a ResourceDefs,
    /// How many `(` and `not` of a node_filter enclose the parser now.
    depth: usize,
}

/// The deepest a node_filter may nest `(` and `not`: the parser and every walk over a filter
/// recurse once per level, so a filter 200,000 levels deep would overflow the stack. PBS
/// filters in practice nest a handful of levels.
pub const MAX_FILTER_DEPTH: usize = 100;

impl<'a> Parser<'a> {
    fn err(&self, kind: K) -> RequestError {
        self.err_at(self.pos, kind)
    }

    fn err_at(&self, byte: usize, kind: K) -> RequestError {
        let byte = byte.min(self.src.len());
        let column = self.src[..byte].chars().count() + 1;
        RequestError { column, kind }
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn eat_str(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn skip_ws(&mut self) {
        let n = self.rest().len() - self.rest().trim_start().len();
        self.pos += n;
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`, or "" if none.
    fn name(&mut self) -> &'a str {
        let rest = self.rest();
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            let ok = c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit());
            if !ok {
                break;
            }
            end = i + c.len_utf8();
        }
        self.pos += end;
        &rest[..end]
    }

    /// Characters up to whitespace or the end.
    fn bare_token(&mut self) -> &'a str {
        let rest = self.rest();
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.pos += end;
        &rest[..end]
    }

    /// A value token: a quoted string (`"..."` or `'...'`), or bare characters.
    /// Returns the text and whether it was quoted.
    fn value_token(&mut self) -> Result<(&'a str, bool), RequestError> {
        if let Some(q) = self.peek().filter(|c| *c == '"' || *c == '\'') {
            let start = self.pos;
            self.pos += 1;
            let rest = self.rest();
            let Some(end) = rest.find(q) else {
                return Err(self.err_at(start, K::UnclosedQuote(q)));
            };
            self.pos += end + 1;
            return Ok((&rest[..end], true));
        }
        let rest = self.rest();
        let end = rest.find(|c: char| !is_bare_char(c)).unwrap_or(rest.len());
        self.pos += end;
        Ok((&rest[..end], false))
    }

    fn select_alternatives(&mut self) -> Result<Vec<Select>, RequestError> {
        let mut alternatives = vec![self.select()?];
        while self.eat_str("||") {
            alternatives.push(self.select()?);
        }
        Ok(alternatives)
    }

    fn select(&mut self) -> Result<Select, RequestError> {
        let mut chunks = vec![self.chunk()?];
        while self.eat('+') {
            chunks.push(self.chunk()?);
        }
        Ok(Select { chunks })
    }

    fn chunk(&mut self) -> Result<ChunkSpec, RequestError> {
        let start = self.pos;
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        let mut count = 1;
        if digits > 0 {
            let text = &self.rest()[..digits];
            count = text
                .parse::<u32>()
                .map_err(|_| self.err(K::BadCount(text.to_owned())))?;
            if count == 0 {
                return Err(self.err(K::BadCount(text.to_owned())));
            }
            self.pos += digits;
            if !self.eat(':') {
                return Ok(ChunkSpec {
                    count,
                    terms: Vec::new(),
                    group: None,
                });
            }
        }
        let mut terms = Vec::new();
        let mut group: Option<String> = None;
        loop {
            let term_at = self.pos;
            let name = self.name();
            if name.is_empty() {
                return Err(self.err(K::Expected("a resource name")));
            }
            let op_at = self.pos;
            let op = self
                .select_op()
                .ok_or_else(|| self.err(K::Expected("`=`, `!=`, `<`, `>`, `<=` or `>=`")))?;
            if name == "group" {
                if op != CmpOp::Eq {
                    return Err(self.err_at(op_at, K::Expected("`=` after group")));
                }
                if group.is_some() {
                    return Err(self.err_at(term_at, K::TwoGroups));
                }
                group = Some(self.group_resource()?);
            } else {
                let value = self.typed_value(name, op, term_at, op_at, false)?;
                terms.push(Term {
                    name: name.to_owned(),
                    op,
                    value,
                });
            }
            if !self.eat(':') {
                break;
            }
        }
        if self.pos == start {
            return Err(self.err(K::Expected("a chunk")));
        }
        Ok(ChunkSpec {
            count,
            terms,
            group,
        })
    }

    /// A select operator: `=` or the conditional ones (`<=` before `<`, and so on).
    fn select_op(&mut self) -> Option<CmpOp> {
        for (s, op) in [
            ("!=", CmpOp::Ne),
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
            ("=", CmpOp::Eq),
        ] {
            if self.eat_str(s) {
                return Some(op);
            }
        }
        None
    }

    fn filter_op(&mut self) -> Option<CmpOp> {
        for (s, op) in [
            ("==", CmpOp::Eq),
            ("!=", CmpOp::Ne),
            ("<=", CmpOp::Le),
            (">=", CmpOp::Ge),
            ("<", CmpOp::Lt),
            (">", CmpOp::Gt),
        ] {
            if self.eat_str(s) {
                return Some(op);
            }
        }
        None
    }

    /// The resource after `group=`: defined, and a string or string_array.
    fn group_resource(&mut self) -> Result<String, RequestError> {
        let at = self.pos;
        let name = self.name();
        if name.is_empty() {
            return Err(self.err(K::Expected("a resource name after group=")));
        }
        let id = self
            .defs
            .lookup(name)
            .ok_or_else(|| self.err_at(at, K::UnknownResource(name.to_owned())))?;
        let kind = self.defs.def(id).kind;
        if !kind.is_stringlike() {
            return Err(self.err_at(at, K::GroupNotString(name.to_owned(), kind)));
        }
        Ok(name.to_owned())
    }

    /// A value for resource `name`, typed by its kind. `op` other than `=` is refused on
    /// consumables, where it would leave the amount to allocate undefined (seed 001).
    fn typed_value(
        &mut self,
        name: &str,
        op: CmpOp,
        name_at: usize,
        op_at: usize,
        in_filter: bool,
    ) -> Result<Value, RequestError> {
        let id = self
            .defs
            .lookup(name)
            .ok_or_else(|| self.err_at(name_at, K::UnknownResource(name.to_owned())))?;
        let def = self.defs.def(id);
        if def.consumable && op != CmpOp::Eq && !in_filter {
            return Err(self.err_at(
                op_at,
                K::ConditionalOnConsumable(op.select_symbol(), name.to_owned()),
            ));
        }
        let at = self.pos;
        let (text, quoted) = if in_filter {
            self.filter_value_token()?
        } else {
            self.value_token()?
        };
        let bad = |expected: &'static str| {
            self.err_at(
                at,
                K::BadValue {
                    resource: name.to_owned(),
                    expected,
                    found: text.to_owned(),
                },
            )
        };
        if !quoted && text.is_empty() {
            return Err(self.err_at(at, K::Expected("a value")));
        }
        // A node_filter is itself quoted, so its strings cannot hold quotes and print back.
        if in_filter && text.contains(['"', '\'']) {
            return Err(bad("a string without quotes"));
        }
        Ok(match def.kind {
            ResourceKind::String | ResourceKind::StringArray => Value::Str(text.to_owned()),
            _ if quoted => return Err(bad(kind_expectation(def.kind))),
            ResourceKind::Long => {
                let v: i64 = text.parse().map_err(|_| bad(kind_expectation(def.kind)))?;
                if def.consumable && !in_filter && v < 0 {
                    return Err(bad("a count of at least 0"));
                }
                Value::Long(v)
            }
            ResourceKind::Float => {
                let v: f64 = text
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite() && (!def.consumable || in_filter || *v >= 0.0))
                    .ok_or_else(|| bad(kind_expectation(def.kind)))?;
                Value::Float(v)
            }
            ResourceKind::Size => Value::SizeBytes(
                parse_size(text).ok_or_else(|| self.err_at(at, K::BadSize(text.to_owned())))?,
            ),
            ResourceKind::Boolean => {
                Value::Bool(parse_bool(text).ok_or_else(|| bad(kind_expectation(def.kind)))?)
            }
        })
    }

    fn place(&mut self) -> Result<Place, RequestError> {
        let mut place = Place::default();
        loop {
            let at = self.pos;
            let word = self.name();
            match word {
                "free" | "pack" | "scatter" | "vscatter" => {
                    let a = match word {
                        "free" => PlaceArrangement::Free,
                        "pack" => PlaceArrangement::Pack,
                        "scatter" => PlaceArrangement::Scatter,
                        _ => PlaceArrangement::VScatter,
                    };
                    if let Some(prev) = place.arrangement {
                        return Err(
                            self.err_at(at, K::PlaceConflict(prev.to_string(), a.to_string()))
                        );
                    }
                    place.arrangement = Some(a);
                }
                "excl" | "shared" | "exclhost" => {
                    let s = match word {
                        "excl" => PlaceSharing::Excl,
                        "shared" => PlaceSharing::Shared,
                        _ => PlaceSharing::ExclHost,
                    };
                    if let Some(prev) = place.sharing {
                        return Err(
                            self.err_at(at, K::PlaceConflict(prev.to_string(), s.to_string()))
                        );
                    }
                    place.sharing = Some(s);
                }
                "group" => {
                    if !self.eat('=') {
                        return Err(self.err(K::Expected("`=` after group")));
                    }
                    if place.group.is_some() {
                        return Err(
                            self.err_at(at, K::PlaceConflict("group".into(), "group".into()))
                        );
                    }
                    place.group = Some(self.group_resource()?);
                }
                "" => return Err(self.err(K::Expected(PLACE_WORDS))),
                other => return Err(self.err_at(at, K::UnknownPlace(other.to_owned()))),
            }
            if !self.eat(':') {
                return Ok(place);
            }
        }
    }

    fn node_filter(&mut self) -> Result<Filter, RequestError> {
        let quote = self.peek().filter(|c| *c == '"' || *c == '\'');
        let Some(q) = quote else {
            // Unquoted: one comparison-only expression up to whitespace.
            let start = self.pos;
            let end = self
                .rest()
                .find(char::is_whitespace)
                .unwrap_or(self.rest().len());
            let mut sub = Parser {
                src: &self.src[..start + end],
                pos: start,
                defs: self.defs,
                depth: 0,
            };
            let f = sub.filter_or()?;
            sub.skip_ws();
            if !sub.at_end() {
                return Err(sub.err(K::Expected("`and`, `or` or the end of the filter")));
            }
            self.pos = sub.pos;
            return Ok(f);
        };
        let open = self.pos;
        let Some(len) = self.src[open + 1..].find(q) else {
            return Err(self.err_at(open, K::UnclosedQuote(q)));
        };
        let mut sub = Parser {
            src: &self.src[..open + 1 + len],
            pos: open + 1,
            defs: self.defs,
            depth: 0,
        };
        sub.skip_ws();
        let f = sub.filter_or()?;
        sub.skip_ws();
        if !sub.at_end() {
            return Err(sub.err(K::Expected("`and`, `or` or the end of the filter")));
        }
        self.pos = open + 1 + len + 1;
        Ok(f)
    }

    fn keyword(&mut self, word: &str) -> bool {
        let rest = self.rest();
        if rest.starts_with(word)
            && !rest[word.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    fn filter_or(&mut self) -> Result<Filter, RequestError> {
        self.filter_chain("or", Self::filter_and, Filter::Or)
    }

    fn filter_and(&mut self) -> Result<Filter, RequestError> {
        self.filter_chain("and", Self::filter_not, Filter::And)
    }

    /// `item (keyword item)*`: one item as it is, several joined by `join`.
    fn filter_chain(
        &mut self,
        keyword: &str,
        item: fn(&mut Self) -> Result<Filter, RequestError>,
        join: fn(Vec<Filter>) -> Filter,
    ) -> Result<Filter, RequestError> {
        let mut items = vec![item(self)?];
        loop {
            let save = self.pos;
            self.skip_ws();
            if self.keyword(keyword) {
                self.skip_ws();
                items.push(item(self)?);
            } else {
                self.pos = save;
                break;
            }
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            join(items)
        })
    }

    fn filter_not(&mut self) -> Result<Filter, RequestError> {
        let at = self.pos;
        if self.keyword("not") {
            self.enter(at)?;
            self.skip_ws();
            let inner = self.filter_not()?;
            self.depth -= 1;
            return Ok(Filter::Not(Box::new(inner)));
        }
        if self.eat('(') {
            self.enter(at)?;
            self.skip_ws();
            let inner = self.filter_or()?;
            self.skip_ws();
            if !self.eat(')') {
                return Err(self.err(K::Expected("`)`")));
            }
            self.depth -= 1;
            return Ok(inner);
        }
        self.filter_compare()
    }

    /// One level deeper into a node_filter, refused past [`MAX_FILTER_DEPTH`].
    fn enter(&mut self, at: usize) -> Result<(), RequestError> {
        self.depth += 1;
        if self.depth > MAX_FILTER_DEPTH {
            return Err(self.err_at(at, K::TooDeep(MAX_FILTER_DEPTH)));
        }
        Ok(())
    }

    fn filter_compare(&mut self) -> Result<Filter, RequestError> {
        let name_at = self.pos;
        let mut name = self.name();
        let mut assigned = false;
        if matches!(name, "resources_available" | "resources_assigned") && self.eat('.') {
            assigned = name == "resources_assigned";
            name = self.name();
        }
        if name.is_empty() {
            return Err(self.err(K::Expected("a resource name, `not` or `(`")));
        }
        self.skip_ws();
        let op_at = self.pos;
        let op = self
            .filter_op()
            .ok_or_else(|| self.err(K::Expected("`==`, `!=`, `<`, `>`, `<=` or `>=`")))?;
        self.skip_ws();
        let value = self.typed_value(name, op, name_at, op_at, true)?;
        Ok(Filter::Compare {
            name: name.to_owned(),
            assigned,
            op,
            value,
        })
    }

    /// A value inside a node_filter: quoted with `'` or `"`, or bare up to whitespace or `)`.
    fn filter_value_token(&mut self) -> Result<(&'a str, bool), RequestError> {
        if self.peek().is_some_and(|c| c == '\'' || c == '"') {
            return self.value_token();
        }
        let rest = self.rest();
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '"' | '\''))
            .unwrap_or(rest.len());
        self.pos += end;
        Ok((&rest[..end], false))
    }

    /// `[*]h1+h2+...`: Moab's HOSTLIST, host names joined by `+`; `*` makes it a subset.
    fn hostlist(&mut self) -> Result<(HostListForm, Vec<String>), RequestError> {
        if self.peek() == Some('^') {
            return Err(self.err(K::SupersetHostList));
        }
        let form = if self.eat('*') {
            HostListForm::Subset
        } else {
            HostListForm::Exact
        };
        let mut hosts = Vec::new();
        loop {
            let rest = self.rest();
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                .unwrap_or(rest.len());
            if end == 0 {
                return Err(self.err(K::Expected("a host name")));
            }
            hosts.push(rest[..end].to_owned());
            self.pos += end;
            if !self.eat('+') {
                return Ok((form, hosts));
            }
        }
    }

    fn nodeset(&mut self) -> Result<NodeSet, RequestError> {
        let at = self.pos;
        let word = self.name();
        let policy = match word.to_ascii_uppercase().as_str() {
            "ONEOF" => NodeSetPolicyName::OneOf,
            "ANYOF" => NodeSetPolicyName::AnyOf,
            "FIRSTOF" => NodeSetPolicyName::FirstOf,
            _ => return Err(self.err_at(at, K::UnknownNodeSetPolicy(word.to_owned()))),
        };
        let mut ns = NodeSet {
            policy,
            attribute: None,
            values: Vec::new(),
        };
        if !self.eat(':') {
            return Ok(ns);
        }
        let at = self.pos;
        let word = self.name();
        ns.attribute = Some(match word.to_ascii_uppercase().as_str() {
            "FEATURE" => NodeSetAttributeName::Feature,
            "VARATTR" => NodeSetAttributeName::VarAttr,
            "PROCSPEED" => NodeSetAttributeName::ProcSpeed,
            "RESERVATION" => NodeSetAttributeName::Reservation,
            "CLASS" => NodeSetAttributeName::Class,
            _ => return Err(self.err_at(at, K::UnknownNodeSetAttribute(word.to_owned()))),
        });
        if !self.eat(':') {
            return Ok(ns);
        }
        // Values, split on `:` and `,` as Moab's MNSFromString does.
        loop {
            let at = self.pos;
            let rest = self.rest();
            let end = rest
                .find(|c: char| c == ':' || c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let value = &rest[..end];
            if value.is_empty() {
                return Err(self.err(K::Expected("a node-set value")));
            }
            if ns.attribute == Some(NodeSetAttributeName::VarAttr) {
                let name = value.split('=').next().unwrap_or(value);
                match self.defs.lookup(name) {
                    None => return Err(self.err_at(at, K::UnknownResource(name.to_owned()))),
                    Some(id) if self.defs.def(id).consumable => {
                        return Err(self.err_at(at, K::VarAttrConsumable(name.to_owned())));
                    }
                    Some(_) => {}
                }
            }
            if ns.attribute == Some(NodeSetAttributeName::ProcSpeed) && parse_speed(value).is_none()
            {
                return Err(self.err_at(at, K::BadProcSpeed(value.to_owned())));
            }
            self.pos += end;
            ns.values.push(value.to_owned());
            if !(self.eat(':') || self.eat(',')) {
                return Ok(ns);
            }
        }
    }
}

/// A PROCSPEED list value: a positive finite number.
pub fn parse_speed(text: &str) -> Option<SpeedValue> {
    text.parse::<f64>().ok().and_then(SpeedValue::new)
}

const PLACE_WORDS: &str = "free, pack, scatter, vscatter, excl, shared, exclhost or group=RES";

fn kind_expectation(kind: ResourceKind) -> &'static str {
    match kind {
        ResourceKind::Long => "an integer",
        ResourceKind::Float => "a number",
        ResourceKind::Size => "a size",
        ResourceKind::Boolean => "True or False",
        ResourceKind::String | ResourceKind::StringArray => "a string",
    }
}

/// A PBS size: digits, then an optional unit b, kb, mb, gb or tb in any case (bytes when
/// none). `None` if malformed or beyond 2^64 bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let n: u64 = text[..digits].parse().ok()?;
    let unit = text[digits..].to_ascii_lowercase();
    let factor = if unit.is_empty() {
        1
    } else {
        SIZE_UNITS.iter().find(|(u, _)| *u == unit)?.1
    };
    n.checked_mul(factor)
}

/// PBS booleans: true/false, t/f, yes/no, y/n, 1/0, in any case.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "1" => Some(true),
        "false" | "f" | "no" | "n" | "0" => Some(false),
        _ => None,
    }
}

/// A Moab duration `[[[DD:]HH:]MM:]SS`, in seconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let factors = [1u64, 60, 3600, 86400];
    let mut total = 0u64;
    for (part, factor) in parts.iter().rev().zip(factors) {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        total = total.checked_add(part.parse::<u64>().ok()?.checked_mul(factor)?)?;
    }
    Some(total)
}
