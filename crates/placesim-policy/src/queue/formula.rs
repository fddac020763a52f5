//! PBS's `job_sort_formula`: an arithmetic expression over a job's terms, higher first.
//!
//! PBS hands the text to Python's `eval` with the terms as globals (openpbs `job_info.cpp`
//! `formula_evaluate`), so the grammar here is the arithmetic part of Python's expressions:
//! numbers, the terms, `+ - * / // % **`, unary `+ -`, parentheses, and the built-ins `min`,
//! `max` and `abs`. A formula that fails when evaluated (a division by zero) gives 0, as PBS
//! logs and uses 0.

use placesim_core::{ConsumableIdx, JobId, SimTime, Workload};

/// A term of the formula, as PBS names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    /// A consumable resource's requested total (sizes in kilobytes, as PBS holds them).
    Resource(ConsumableIdx),
    /// `walltime`: the job's requested walltime, in seconds.
    Walltime,
    /// `eligible_time`: the seconds the job has been eligible to run: since its submission,
    /// less the time it spent over a user, group or project run limit (PBS with
    /// `eligible_time_enable`).
    EligibleTime,
    /// `queue_priority`: its queue's priority (0 for the default queue).
    QueuePriority,
    /// `job_priority`: the job's own priority (0 when it has none, as in PBS).
    JobPriority,
    /// `fairshare_perc` (or `fair_share_perc`): the job's entity's share of the machine along
    /// the fairshare tree.
    FairsharePerc,
    /// `fairshare_tree_usage`: its entity's usage factor (openpbs `calc_usage_factor`).
    FairshareTreeUsage,
    /// `fairshare_factor`: 2^(−tree usage ÷ share), 0 for an entity with no share.
    FairshareFactor,
    /// Moab's fairshare factor of one of the job's credentials (by its index in
    /// [`super::CREDENTIALS`]): the distance of its usage to its target. Only Moab's priority
    /// names it.
    MoabFairshare(u8),
    /// Moab's priority of one of the job's credentials (by its index in
    /// [`super::CREDENTIALS`]), `USERCFG[name] PRIORITY=` and the like. Only Moab's priority
    /// names it.
    MoabCredential(u8),
}

/// The most nested an expression may be: deeper ones are refused, not evaluated, so that no
/// input can overflow the stack.
pub const MAX_FORMULA_DEPTH: usize = 100;

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Number(f64),
    Term(Term),
    Negate(Box<Node>),
    Binary(Op, Box<Node>, Box<Node>),
    Call(Builtin, Vec<Node>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    Min,
    Max,
    Abs,
}

/// A parsed `job_sort_formula`.
#[derive(Debug, Clone, PartialEq)]
pub struct Formula {
    root: Node,
    dynamic: bool,
    fairshare: bool,
    moab_fairshare: bool,
}

// A parsed number is never NaN (the parser reads only digits, a point and an exponent), so
// equality is reflexive.
impl Eq for Formula {}

/// Why a formula was refused: the byte column (from 1) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct FormulaError {
    /// Where, counting bytes from 1.
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

/// The values of a job's terms, for one evaluation.
#[derive(Debug, Clone, Copy)]
pub struct TermValues<'a> {
    /// The workload the job is in.
    pub workload: &'a Workload,
    /// The job.
    pub job: JobId,
    /// The instant of the pass.
    pub now: SimTime,
    /// The seconds the job has been eligible to run, up to now.
    pub eligible_s: u64,
    /// The job's queue's priority.
    pub queue_priority: i64,
    /// The job's entity's share of the machine and usage factor in the fairshare tree, at
    /// the start of the cycle; 0 for both without a tree.
    pub fairshare: (f64, f64),
    /// Moab's fairshare factors of the job's credentials, at the start of the iteration;
    /// zeros without Moab fairshare.
    pub moab_fairshare: [f64; 4],
    /// The priorities of the job's Moab credentials; zeros without any.
    pub moab_credentials: [f64; 4],
}

impl<'a> TermValues<'a> {
    /// The values of `job`'s terms at `now` with nothing but the job to go on: eligible
    /// since its submission, in a queue of priority 0, no fairshare tree, no Moab
    /// credentials (set the fields for those).
    pub fn at(workload: &'a Workload, job: JobId, now: SimTime) -> Self {
        TermValues {
            workload,
            job,
            now,
            eligible_s: now
                .as_secs()
                .saturating_sub(workload.job(job).submit.as_secs()),
            queue_priority: 0,
            fairshare: (0.0, 0.0),
            moab_fairshare: [0.0; 4],
            moab_credentials: [0.0; 4],
        }
    }
}

impl Formula {
    /// Parses `text`, resolving each name with `term`: a term, or the message saying why the
    /// name is refused.
    pub fn parse(
        text: &str,
        term: &dyn Fn(&str) -> Result<Term, String>,
    ) -> Result<Formula, FormulaError> {
        let mut parser = Parser {
            text,
            pos: 0,
            term,
            depth: 0,
        };
        let root = parser.expression()?;
        parser.skip_space();
        if parser.pos < text.len() {
            return Err(parser.error("expected an operator or the end of the formula"));
        }
        let fairshare = [
            Term::FairsharePerc,
            Term::FairshareTreeUsage,
            Term::FairshareFactor,
        ]
        .into_iter()
        .any(|t| uses(&root, t));
        let moab_fairshare = (0..4).any(|k| uses(&root, Term::MoabFairshare(k)));
        let dynamic = fairshare || moab_fairshare || uses(&root, Term::EligibleTime);
        Ok(Formula {
            root,
            dynamic,
            fairshare,
            moab_fairshare,
        })
    }

    /// Whether it reads Moab's fairshare factors.
    pub fn uses_moab_fairshare(&self) -> bool {
        self.moab_fairshare
    }

    /// Whether it reads the fairshare tree (whose usage then has to be kept, as PBS keeps it
    /// for a formula even without `fair_share`).
    pub fn uses_fairshare(&self) -> bool {
        self.fairshare
    }

    /// Whether the value changes with time (it uses `eligible_time` or a fairshare term), so
    /// that it must be computed at every pass.
    pub fn is_dynamic(&self) -> bool {
        self.dynamic
    }

    /// The formula's value for a job; 0 if evaluating it fails, as in PBS.
    pub fn value(&self, terms: &TermValues<'_>) -> f64 {
        let v = eval(&self.root, terms);
        if v.is_finite() { v } else { 0.0 }
    }
}

fn uses(node: &Node, term: Term) -> bool {
    match node {
        Node::Number(_) => false,
        Node::Term(t) => *t == term,
        Node::Negate(a) => uses(a, term),
        Node::Binary(_, a, b) => uses(a, term) || uses(b, term),
        Node::Call(_, args) => args.iter().any(|a| uses(a, term)),
    }
}

fn term_value(term: Term, v: &TermValues<'_>) -> f64 {
    match term {
        Term::Resource(c) => v.workload.request_of(v.job).total(c) as f64,
        Term::Walltime => v.workload.job(v.job).estimate.as_secs() as f64,
        Term::EligibleTime => v.eligible_s as f64,
        Term::QueuePriority => v.queue_priority as f64,
        Term::JobPriority => v.workload.job(v.job).priority().unwrap_or(0) as f64,
        Term::FairsharePerc => v.fairshare.0,
        Term::FairshareTreeUsage => v.fairshare.1,
        Term::FairshareFactor if v.fairshare.0 == 0.0 => 0.0,
        Term::FairshareFactor => 2f64.powf(-(v.fairshare.1 / v.fairshare.0)),
        Term::MoabFairshare(k) => v.moab_fairshare.get(usize::from(k)).copied().unwrap_or(0.0),
        Term::MoabCredential(k) => v
            .moab_credentials
            .get(usize::from(k))
            .copied()
            .unwrap_or(0.0),
    }
}

/// Python's arithmetic; a failure (division by zero) is NaN, which [`Formula::value`] turns
/// into 0.
fn eval(node: &Node, v: &TermValues<'_>) -> f64 {
    match node {
        Node::Number(x) => *x,
        Node::Term(t) => term_value(*t, v),
        Node::Negate(a) => -eval(a, v),
        Node::Binary(op, a, b) => {
            let (x, y) = (eval(a, v), eval(b, v));
            match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div if y == 0.0 => f64::NAN,
                Op::Div => x / y,
                Op::FloorDiv if y == 0.0 => f64::NAN,
                Op::FloorDiv => (x / y).floor(),
                Op::Mod if y == 0.0 => f64::NAN,
                // Python's modulo takes the divisor's sign.
                Op::Mod => x - y * (x / y).floor(),
                Op::Pow => x.powf(y),
            }
        }
        Node::Call(f, args) => {
            let values = args.iter().map(|a| eval(a, v));
            match f {
                Builtin::Min => values.fold(f64::INFINITY, f64::min),
                Builtin::Max => values.fold(f64::NEG_INFINITY, f64::max),
                Builtin::Abs => args.first().map_or(f64::NAN, |a| eval(a, v).abs()),
            }
        }
    }
}

struct Parser<'t, 'f> {
    text: &'t str,
    pos: usize,
    term: &'f dyn Fn(&str) -> Result<Term, String>,
    depth: usize,
}

impl Parser<'_, '_> {
    fn error(&self, message: impl Into<String>) -> FormulaError {
        FormulaError {
            column: self.pos + 1,
            message: message.into(),
        }
    }

    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.pos..].starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn deeper(&mut self) -> Result<(), FormulaError> {
        self.depth += 1;
        if self.depth > MAX_FORMULA_DEPTH {
            return Err(self.error(format!(
                "the formula nests more than {MAX_FORMULA_DEPTH} deep"
            )));
        }
        Ok(())
    }

    /// `sum := product (('+' | '-') product)*`
    fn expression(&mut self) -> Result<Node, FormulaError> {
        let mut left = self.product()?;
        loop {
            let op = if self.eat("+") {
                Op::Add
            } else if self.eat("-") {
                Op::Sub
            } else {
                break;
            };
            let right = self.product()?;
            left = Node::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// `product := unary (('*' | '//' | '/' | '%') unary)*`
    fn product(&mut self) -> Result<Node, FormulaError> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat("//") {
                Op::FloorDiv
            } else if self.eat("*") {
                Op::Mul
            } else if self.eat("/") {
                Op::Div
            } else if self.eat("%") {
                Op::Mod
            } else {
                break;
            };
            let right = self.unary()?;
            left = Node::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// `unary := ('-' | '+') unary | power`
    fn unary(&mut self) -> Result<Node, FormulaError> {
        let negate = if self.eat("-") {
            true
        } else if self.eat("+") {
            false
        } else {
            return self.power();
        };
        self.deeper()?;
        let operand = self.unary()?;
        self.depth -= 1;
        Ok(if negate {
            Node::Negate(Box::new(operand))
        } else {
            operand
        })
    }

    /// `power := atom ('**' unary)?`: right-associative, and binding tighter than a unary
    /// minus on its left (`-2**2` is -4), as in Python.
    fn power(&mut self) -> Result<Node, FormulaError> {
        let base = self.atom()?;
        if self.eat("**") {
            let exponent = self.unary()?;
            return Ok(Node::Binary(Op::Pow, Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    /// `atom := number | name | name '(' args ')' | '(' sum ')'`
    fn atom(&mut self) -> Result<Node, FormulaError> {
        let Some(c) = self.peek() else {
            return Err(self.error("expected a number, a term or `(`, found the end"));
        };
        if c == '(' {
            self.deeper()?;
            self.pos += 1;
            let inner = self.expression()?;
            if !self.eat(")") {
                return Err(self.error("expected `)`"));
            }
            self.depth -= 1;
            return Ok(inner);
        }
        let start = self.pos;
        if c.is_ascii_digit() || c == '.' {
            let len = self.text[start..]
                .find(|ch: char| !(ch.is_ascii_digit() || ch == '.' || ch == '_'))
                .unwrap_or(self.text.len() - start);
            let mut end = start + len;
            // An exponent: 1e3, 2.5E-4.
            let rest = &self.text[end..];
            if rest.starts_with(['e', 'E']) {
                let after = rest[1..].strip_prefix(['+', '-']).unwrap_or(&rest[1..]);
                let digits = after.len()
                    - after
                        .trim_start_matches(|ch: char| ch.is_ascii_digit())
                        .len();
                if digits > 0 {
                    end += rest.len() - after.len() + digits;
                }
            }
            let literal = self.text[start..end].replace('_', "");
            self.pos = end;
            return literal
                .parse::<f64>()
                .map(Node::Number)
                .map_err(|_| FormulaError {
                    column: start + 1,
                    message: format!("`{}` is not a number", &self.text[start..end]),
                });
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let len = self.text[start..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(self.text.len() - start);
            let name = &self.text[start..start + len];
            self.pos = start + len;
            let builtin = match name {
                "min" => Some(Builtin::Min),
                "max" => Some(Builtin::Max),
                "abs" => Some(Builtin::Abs),
                _ => None,
            };
            if let Some(f) = builtin {
                self.deeper()?;
                if !self.eat("(") {
                    return Err(self.error(format!("expected `(` after `{name}`")));
                }
                let mut args = vec![self.expression()?];
                while self.eat(",") {
                    args.push(self.expression()?);
                }
                if !self.eat(")") {
                    return Err(self.error("expected `,` or `)`"));
                }
                let count_ok = match f {
                    Builtin::Abs => args.len() == 1,
                    Builtin::Min | Builtin::Max => args.len() >= 2,
                };
                self.depth -= 1;
                if !count_ok {
                    return Err(FormulaError {
                        column: start + 1,
                        message: format!(
                            "`{name}` takes {}",
                            if f == Builtin::Abs {
                                "one argument"
                            } else {
                                "two arguments or more"
                            }
                        ),
                    });
                }
                return Ok(Node::Call(f, args));
            }
            return (self.term)(name)
                .map(Node::Term)
                .map_err(|message| FormulaError {
                    column: start + 1,
                    message,
                });
        }
        Err(self.error(format!("expected a number, a term or `(`, found `{c}`")))
    }
}
