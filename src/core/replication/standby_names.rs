//! `synchronous_standby_names`: its grammar (syncrep_gram.y,
//! syncrep_scanner.l) and what it names.

/// How the synchronous standbys are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMethod {
    /// `FIRST n (...)` (or `n (...)`, or a plain list): the n connected
    /// standbys earliest in the list; a commit waits for all of them.
    Priority,
    /// `ANY n (...)`: a commit waits for any n of the listed standbys.
    Quorum,
}

/// A parsed `synchronous_standby_names` (`SyncRepConfigData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyNames {
    pub method: SyncMethod,
    /// How many standbys a commit waits for (`num_sync`).
    pub num_sync: u32,
    /// The listed names, in order; `*` matches any standby.
    pub members: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    Num(String),
    Any,
    First,
    Comma,
    Open,
    Close,
    Junk(char),
}

/// syncrep_scanner.l: identifiers (letters, digits, `_`, `$`, bytes past
/// ASCII), double-quoted identifiers with `""` for a quote, digit strings,
/// `*`, `,`, `(`, `)`; ANY and FIRST in any case are keywords unless quoted.
/// Tokens come with the text they were read from, for error messages.
fn scan(text: &str) -> Result<Vec<(Token, String)>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |c: char| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii();
    let ident_cont = |c: char| ident_start(c) || c.is_ascii_digit() || c == '$';
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let token = if matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c' | '\x0b') {
            i += 1;
            continue;
        } else if c == '"' {
            let mut name = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err("unterminated quoted identifier at end of input".into()),
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        name.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(&ch) => {
                        name.push(ch);
                        i += 1;
                    }
                }
            }
            Token::Name(name)
        } else if ident_start(c) {
            while i < chars.len() && ident_cont(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word.eq_ignore_ascii_case("any") {
                Token::Any
            } else if word.eq_ignore_ascii_case("first") {
                Token::First
            } else {
                Token::Name(word)
            }
        } else if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            Token::Num(chars[start..i].iter().collect())
        } else {
            i += 1;
            match c {
                '*' => Token::Name("*".into()),
                ',' => Token::Comma,
                '(' => Token::Open,
                ')' => Token::Close,
                other => Token::Junk(other),
            }
        };
        out.push((token, chars[start..i].iter().collect()));
    }
    Ok(out)
}

impl StandbyNames {
    /// Parses `synchronous_standby_names` as syncrep_gram.y does:
    ///
    /// ```text
    /// standby_config: standby_list                      (FIRST 1)
    ///               | NUM '(' standby_list ')'          (FIRST NUM)
    ///               | ANY NUM '(' standby_list ')'
    ///               | FIRST NUM '(' standby_list ')'
    /// standby_list:   standby_name [',' standby_name]...
    /// standby_name:   NAME | NUM
    /// ```
    ///
    /// An empty string means no synchronous standbys (`Ok(None)`). Errors
    /// read like PostgreSQL's ("syntax error at or near \"x\"").
    pub fn parse(text: &str) -> Result<Option<StandbyNames>, String> {
        if text.is_empty() {
            return Ok(None);
        }
        let tokens = scan(text)?;
        let mut pos = 0;
        let err_at = |pos: usize| match tokens.get(pos) {
            Some((_, t)) => format!("syntax error at or near \"{t}\""),
            None => "syntax error at end of input".to_string(),
        };
        let list = |pos: &mut usize| -> Result<Vec<String>, String> {
            let mut names = Vec::new();
            loop {
                match tokens.get(*pos) {
                    Some((Token::Name(n), _)) | Some((Token::Num(n), _)) => names.push(n.clone()),
                    _ => return Err(err_at(*pos)),
                }
                *pos += 1;
                if tokens.get(*pos).map(|t| &t.0) == Some(&Token::Comma) {
                    *pos += 1;
                } else {
                    return Ok(names);
                }
            }
        };
        let counted = |pos: &mut usize, num: &str| -> Result<(u32, Vec<String>), String> {
            if tokens.get(*pos).map(|t| &t.0) != Some(&Token::Open) {
                return Err(err_at(*pos));
            }
            *pos += 1;
            let members = list(pos)?;
            if tokens.get(*pos).map(|t| &t.0) != Some(&Token::Close) {
                return Err(err_at(*pos));
            }
            *pos += 1;
            let n = num
                .parse::<u32>()
                .ok()
                .filter(|&n| n <= i32::MAX as u32)
                .ok_or_else(|| format!("number of synchronous standbys ({num}) is out of range"))?;
            Ok((n, members))
        };
        let (method, num_sync, members) = match tokens.first().map(|t| &t.0) {
            Some(Token::Any) | Some(Token::First) => {
                let method = if tokens[0].0 == Token::Any {
                    SyncMethod::Quorum
                } else {
                    SyncMethod::Priority
                };
                pos = 1;
                let Some((Token::Num(num), _)) = tokens.get(pos) else {
                    return Err(err_at(pos));
                };
                pos += 1;
                let (n, members) = counted(&mut pos, num)?;
                (method, n, members)
            }
            Some(Token::Num(num)) if tokens.get(1).map(|t| &t.0) == Some(&Token::Open) => {
                pos = 1;
                let (n, members) = counted(&mut pos, num)?;
                (SyncMethod::Priority, n, members)
            }
            _ => (SyncMethod::Priority, 1, list(&mut pos)?),
        };
        if pos < tokens.len() {
            return Err(err_at(pos));
        }
        if num_sync == 0 {
            // check_synchronous_standby_names
            return Err(format!(
                "number of synchronous standbys ({num_sync}) must be greater than zero"
            ));
        }
        Ok(Some(StandbyNames {
            method,
            num_sync,
            members,
        }))
    }

    /// A standby's sync priority (`SyncRepGetStandbyPriority`): 0 if no
    /// member names it (an asynchronous standby), else the 1-based position
    /// of the first member that does (names compare case-insensitively, `*`
    /// matches any); 1 for every listed standby with ANY.
    pub fn priority(&self, name: &str) -> u32 {
        let Some(i) = self
            .members
            .iter()
            .position(|m| m == "*" || m.eq_ignore_ascii_case(name))
        else {
            return 0;
        };
        match self.method {
            SyncMethod::Priority => i as u32 + 1,
            SyncMethod::Quorum => 1,
        }
    }

    /// The value as PostgreSQL would accept it back.
    pub fn to_text(&self) -> String {
        let method = match self.method {
            SyncMethod::Priority => "FIRST",
            SyncMethod::Quorum => "ANY",
        };
        format!("{method} {} ({})", self.num_sync, self.members.join(", "))
    }
}
