//! A tolerant parser of the Prometheus text exposition format (and OpenMetrics text), for
//! reading an inference server's load from its metrics endpoint.

/// One sample of the Prometheus text format.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PromSample {
    pub(super) name: String,
    pub(super) labels: Vec<(String, String)>,
    pub(super) value: f64,
}

impl PromSample {
    pub(super) fn label(&self, name: &str) -> Option<&str> {
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
pub(super) fn parse_prometheus(text: &str) -> Vec<PromSample> {
    text.lines().filter_map(parse_line).collect()
}

pub(super) fn parse_line(line: &str) -> Option<PromSample> {
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

pub(super) fn parse_value(s: &str) -> Option<f64> {
    match s {
        "NaN" | "nan" => Some(f64::NAN),
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        _ => s.parse().ok(),
    }
}
