//! A reader for GML (Graph Modelling Language, Himsolt 1997), the format of the Internet
//! Topology Zoo: `key value` pairs where a value is a number, a quoted string or a `[ … ]` list
//! of pairs; `#` starts a comment line. Errors carry the line and column.

use continuum_core::config::{ConfigError, Source};

/// A GML value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A number (integers too).
    Num(f64),
    /// A string, quotes removed, `&amp;`-style entities kept as written.
    Str(String),
    /// A nested list of pairs.
    List(Vec<Pair>),
}

/// One `key value` pair, with the line and column of its key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pair {
    /// The key.
    pub(crate) key: String,
    /// The value.
    pub(crate) value: Value,
    /// 1-based line of the key.
    pub(crate) line: usize,
    /// 1-based column of the key.
    pub(crate) column: usize,
}

impl Pair {
    /// The first value under `key` in this pair's list (`None` if this is not a list or has
    /// no such key).
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match &self.value {
            Value::List(l) => l.iter().find(|p| p.key == key).map(|p| &p.value),
            _ => None,
        }
    }
}

struct Lexer<'a> {
    src: &'a Source,
    chars: Vec<char>,
    at: usize,
    line: usize,
    column: usize,
}

#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Num(f64),
    Str(String),
    Open,
    Close,
    End,
}

impl Lexer<'_> {
    fn error(&self, line: usize, column: usize, message: String) -> ConfigError {
        ConfigError {
            file: self.src.path.clone(),
            line,
            column,
            field: String::new(),
            message,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = *self.chars.get(self.at)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// The next token and where it starts.
    fn next(&mut self) -> Result<(Token, usize, usize), ConfigError> {
        loop {
            match self.chars.get(self.at) {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('#') => while self.bump().is_some_and(|c| c != '\n') {},
                _ => break,
            }
        }
        let (line, column) = (self.line, self.column);
        let Some(c) = self.bump() else {
            return Ok((Token::End, line, column));
        };
        let tok = match c {
            '[' => Token::Open,
            ']' => Token::Close,
            '"' => {
                let mut s = String::new();
                loop {
                    match self.bump() {
                        Some('"') => break,
                        Some(c) => s.push(c),
                        None => {
                            return Err(self.error(line, column, "unterminated string".into()));
                        }
                    }
                }
                Token::Str(s)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut s = String::from(c);
                while let Some(&c) = self.chars.get(self.at) {
                    if !(c.is_ascii_alphanumeric() || c == '_') {
                        break;
                    }
                    s.push(c);
                    self.bump();
                }
                Token::Word(s)
            }
            c if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => {
                let mut s = String::from(c);
                while let Some(&c) = self.chars.get(self.at) {
                    if c.is_whitespace() || c == '[' || c == ']' || c == '"' {
                        break;
                    }
                    s.push(c);
                    self.bump();
                }
                let v = s.parse::<f64>().map_err(|_| {
                    self.error(line, column, format!("expected a number, got `{s}`"))
                })?;
                Token::Num(v)
            }
            c => {
                return Err(self.error(line, column, format!("unexpected character `{c}`")));
            }
        };
        Ok((tok, line, column))
    }

    /// Pairs up to `]` (nested) or the end of the text (top level).
    fn pairs(&mut self, nested: Option<(usize, usize)>) -> Result<Vec<Pair>, ConfigError> {
        let mut out = Vec::new();
        loop {
            let (tok, line, column) = self.next()?;
            let key = match tok {
                Token::Word(w) => w,
                Token::Close if nested.is_some() => return Ok(out),
                Token::End => {
                    return match nested {
                        None => Ok(out),
                        Some((l, c)) => Err(self.error(l, c, "`[` is never closed".into())),
                    };
                }
                other => {
                    return Err(self.error(line, column, format!("expected a key, got {other:?}")));
                }
            };
            let (tok, vl, vc) = self.next()?;
            let value = match tok {
                Token::Num(v) => Value::Num(v),
                Token::Str(s) => Value::Str(s),
                Token::Open => Value::List(self.pairs(Some((vl, vc)))?),
                other => {
                    return Err(self.error(
                        vl,
                        vc,
                        format!("expected a value for `{key}`, got {other:?}"),
                    ));
                }
            };
            out.push(Pair {
                key,
                value,
                line,
                column,
            });
        }
    }
}

/// Parses a whole GML text into its top-level pairs.
pub(crate) fn parse(src: &Source) -> Result<Vec<Pair>, ConfigError> {
    let mut lx = Lexer {
        src,
        chars: src.text.chars().collect(),
        at: 0,
        line: 1,
        column: 1,
    };
    lx.pairs(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nested_lists_numbers_and_strings() {
        let src = Source::inline(
            "t.gml",
            "# a comment\ngraph [\n  label \"Net\"\n  node [ id 0 Latitude -33.5 Longitude 151 ]\n  edge [ source 0 target 1 ]\n]\n",
        );
        let top = parse(&src).unwrap();
        assert_eq!(top.len(), 1);
        let Value::List(g) = &top[0].value else {
            panic!()
        };
        assert_eq!(g[0].value, Value::Str("Net".into()));
        assert_eq!(g[1].get("Latitude"), Some(&Value::Num(-33.5)));
        assert_eq!((g[2].key.as_str(), g[2].line, g[2].column), ("edge", 5, 3));
    }

    #[test]
    fn errors_point_at_line_and_column() {
        for (text, at, what) in [
            ("graph [\n  node [ id 0\n", (2, 8), "never closed"),
            ("graph [ label \"x ]", (1, 15), "unterminated"),
            ("graph [ id 1x2 ]", (1, 12), "number"),
            ("graph [ 5 ]", (1, 9), "expected a key"),
            ("graph [ id ]", (1, 12), "expected a value for `id`"),
        ] {
            let e = parse(&Source::inline("t.gml", text)).unwrap_err();
            assert_eq!((e.line, e.column), at, "{text}: {e}");
            assert!(e.message.contains(what), "{text}: {e}");
        }
    }
}
