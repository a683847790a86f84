//! A tolerant parser of the Prometheus text exposition format (and OpenMetrics text), for
//! reading an inference server's load (the gateway) and a gateway's demand (the allocator)
//! from a metrics endpoint. One parser for every reader: label escapes, exemplars, timestamps
//! and special values are handled once.

/// One sample of the Prometheus text format.
#[derive(Debug, Clone, PartialEq)]
pub struct PromSample {
    /// Metric name (with its `_total`, `_bucket`… suffix as written).
    pub name: String,
    /// Labels in the order written, values unescaped.
    pub labels: Vec<(String, String)>,
    /// The sample's value.
    pub value: f64,
}

impl PromSample {
    /// The value of label `name`, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the Prometheus text exposition format (and OpenMetrics text): one sample per line,
/// `name{label="value",…} value [timestamp]`. Comments (`# HELP`, `# TYPE`, `# EOF`), blank
/// lines, timestamps and exemplars are skipped; label values may hold `\\`, `\"` and `\n`
/// escapes; values may be `NaN`, `+Inf` or `-Inf`. Lines that do not parse are skipped.
pub fn parse_prometheus(text: &str) -> Vec<PromSample> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<PromSample> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let end = line.find(|c: char| !is_name(c)).unwrap_or(line.len());
    let name = &line[..end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut rest = line[end..].trim_start();
    let mut labels = Vec::new();
    if let Some(after) = rest.strip_prefix('{') {
        let mut chars = after.char_indices().peekable();
        loop {
            while chars
                .next_if(|(_, c)| c.is_whitespace() || *c == ',')
                .is_some()
            {}
            match chars.peek() {
                Some((i, '}')) => {
                    rest = after[i + 1..].trim_start();
                    break;
                }
                None => return None,
                _ => {}
            }
            let mut key = String::new();
            while let Some((_, c)) = chars.next_if(|(_, c)| is_name(*c)) {
                key.push(c);
            }
            while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
            if key.is_empty() || chars.next()?.1 != '=' {
                return None;
            }
            while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
            if chars.next()?.1 != '"' {
                return None;
            }
            let mut value = String::new();
            loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        c @ ('\\' | '"') => value.push(c),
                        c => {
                            value.push('\\');
                            value.push(c);
                        }
                    },
                    c => value.push(c),
                }
            }
            labels.push((key, value));
        }
    }
    let value = parse_value(rest.split_whitespace().next()?)?;
    Some(PromSample {
        name: name.to_string(),
        labels,
        value,
    })
}

fn parse_value(s: &str) -> Option<f64> {
    match s {
        "NaN" | "nan" => Some(f64::NAN),
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn parses_the_awkward_cases() {
        let text = "\
    # TYPE odd counter
    odd_total{path=\"a \\\"quoted\\\" \\\\ back\\nslash\",le=\"+Inf\"} 7 1712345678000
    spaced { a = \"1\" , b=\"x,}y\", } 2.5e3
    bare 42
    trailing_comma{a=\"1\",} -3
    nan_gauge{m=\"x\"} NaN
    pos_inf +Inf
    neg_inf -Inf
    with_exemplar_total{m=\"x\"} 5 # {trace_id=\"abc\"} 1.0 1712345678.1
    colon:name 1
    # EOF
    
    broken{a=\"unterminated} 3
    broken2{a} 3
    9starts_with_digit 3
    novalue{a=\"1\"}
    ";
        let s = parse_prometheus(text);
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "odd_total",
                "spaced",
                "bare",
                "trailing_comma",
                "nan_gauge",
                "pos_inf",
                "neg_inf",
                "with_exemplar_total",
                "colon:name"
            ]
        );
        assert_eq!(
            s[0].labels,
            l(&[("path", "a \"quoted\" \\ back\nslash"), ("le", "+Inf")])
        );
        assert_eq!(s[0].value, 7.0);
        assert_eq!(s[1].labels, l(&[("a", "1"), ("b", "x,}y")]));
        assert_eq!(s[1].value, 2500.0);
        assert!(s[2].labels.is_empty());
        assert_eq!(s[3].value, -3.0);
        assert!(s[4].value.is_nan());
        assert_eq!(s[5].value, f64::INFINITY);
        assert_eq!(s[6].value, f64::NEG_INFINITY);
        assert_eq!(s[7].value, 5.0);
    }
}
