//! PBS's `exec_vnode`: where a job runs, one parenthesised group per chunk, groups joined by
//! `+`, a chunk split over vnodes listing them inside its group, joined by `+`:
//! `(vnodeA:ncpus=N:mem=X)+(vnodeB:ncpus=P:mem=Y+vnodeC:mem=Z)`; a vnode allocated with no
//! resources appears alone (`(vnodeB)`). site-inputs.md §3.5; pbs_job_attributes(7B).

use crate::{RequestError, RequestErrorKind};
use placesim_core::ResourceDefs;

/// One vnode of an `exec_vnode`: its name and the consumable amounts it gives the job (one per
/// consumable, in slot order, sizes in KiB as requests hold them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecVnode {
    /// The vnode's name.
    pub vnode: String,
    /// What it gives the job.
    pub amounts: Vec<u64>,
}

/// Parses an `exec_vnode` into its vnodes, in written order (a vnode named in two groups
/// appears twice). Each vnode's amounts are read as a chunk's (`ncpus=2:mem=4gb`), so a value
/// is checked against its resource's type and only consumables may appear; errors give the
/// 1-based column in `text`.
pub fn parse_exec_vnode(text: &str, defs: &ResourceDefs) -> Result<Vec<ExecVnode>, RequestError> {
    let err = |at: usize, kind| RequestError {
        column: text[..at].chars().count() + 1,
        kind,
    };
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        if bytes.get(pos) != Some(&b'(') {
            return Err(err(pos, RequestErrorKind::Expected("`(` opening a chunk")));
        }
        pos += 1;
        loop {
            let end = text[pos..]
                .find(['+', ')'])
                .map(|i| pos + i)
                .ok_or_else(|| {
                    err(
                        text.len(),
                        RequestErrorKind::Expected("`)` closing the chunk"),
                    )
                })?;
            let entry = &text[pos..end];
            let (name, resources) = entry.split_once(':').unwrap_or((entry, ""));
            if name.is_empty() || name.contains(['(', ' ', '=']) {
                return Err(err(pos, RequestErrorKind::Expected("a vnode name")));
            }
            let n_consumables = defs.n_consumables();
            let amounts = if resources.is_empty() {
                vec![0; n_consumables]
            } else {
                // Read as the chunk `1:<resources>`, whose errors are shifted back onto it.
                let prefix = "select=1:";
                let request = crate::parse_and_lower(&format!("{prefix}{resources}"), defs)
                    .map_err(|e| {
                        let inner = e.column.saturating_sub(prefix.chars().count() + 1);
                        let at = pos + name.len() + 1;
                        RequestError {
                            column: text[..at].chars().count() + 1 + inner,
                            kind: e.kind,
                        }
                    })?;
                let chunk = &request.chunks[0];
                if !chunk.constraints.is_empty() || chunk.group.is_some() {
                    return Err(err(
                        pos + name.len() + 1,
                        RequestErrorKind::Expected("consumable amounts only (ncpus=2:mem=4gb)"),
                    ));
                }
                chunk.amounts.clone()
            };
            out.push(ExecVnode {
                vnode: name.to_owned(),
                amounts,
            });
            pos = end + 1;
            if bytes[end] == b')' {
                break;
            }
        }
        match bytes.get(pos) {
            None => return Ok(out),
            Some(b'+') => pos += 1,
            Some(_) => return Err(err(pos, RequestErrorKind::Expected("`+` between chunks"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<(String, Vec<u64>)>, String> {
        parse_exec_vnode(text, &ResourceDefs::default())
            .map(|v| v.into_iter().map(|e| (e.vnode, e.amounts)).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn chunks_split_vnodes_and_bare_vnodes() {
        assert_eq!(
            parse("(a:ncpus=2:mem=4gb)+(b:ncpus=1+c:mem=1kb)+(d)").unwrap(),
            [
                ("a".to_owned(), vec![2, 4 * 1024 * 1024, 0]),
                ("b".to_owned(), vec![1, 0, 0]),
                ("c".to_owned(), vec![0, 1, 0]),
                ("d".to_owned(), vec![0, 0, 0]),
            ]
        );
    }

    #[test]
    fn bad_texts_say_where_and_what() {
        assert_eq!(
            parse("a:ncpus=2").unwrap_err(),
            "column 1: expected `(` opening a chunk"
        );
        assert_eq!(
            parse("(a:ncpus=2").unwrap_err(),
            "column 11: expected `)` closing the chunk"
        );
        assert_eq!(
            parse("(a:ncpus=2)(b)").unwrap_err(),
            "column 12: expected `+` between chunks"
        );
        assert_eq!(
            parse("(a:ncpus=two)").unwrap_err(),
            "column 10: resource `ncpus` needs an integer, found `two`"
        );
        assert_eq!(
            parse("(a:ncpus=1)+(:ncpus=1)").unwrap_err(),
            "column 14: expected a vnode name"
        );
    }
}
