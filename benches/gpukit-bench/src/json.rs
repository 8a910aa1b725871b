//! A minimal JSON writer for the result lines (the bench has no serde dependency).

use std::fmt::Write;

/// A JSON value, built by the bench and written as one line.
pub enum Json {
    Null,
    Num(f64),
    Int(i64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    /// Numbers from f64s (NaN and infinities become null, as JSON has neither).
    pub fn nums(v: &[f64]) -> Json {
        Json::Arr(v.iter().map(|&x| Json::Num(x)).collect())
    }

    /// The value as compact JSON text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, s: &mut String) {
        match self {
            Json::Null => s.push_str("null"),
            Json::Num(x) if x.is_finite() => {
                let _ = write!(s, "{x:?}");
            }
            Json::Num(_) => s.push_str("null"),
            Json::Int(i) => {
                let _ = write!(s, "{i}");
            }
            Json::Str(t) => {
                s.push('"');
                for c in t.chars() {
                    match c {
                        '"' => s.push_str("\\\""),
                        '\\' => s.push_str("\\\\"),
                        '\n' => s.push_str("\\n"),
                        c if (c as u32) < 0x20 => {
                            let _ = write!(s, "\\u{:04x}", c as u32);
                        }
                        c => s.push(c),
                    }
                }
                s.push('"');
            }
            Json::Arr(v) => {
                s.push('[');
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    x.write(s);
                }
                s.push(']');
            }
            Json::Obj(kv) => {
                s.push('{');
                for (i, (k, v)) in kv.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    Json::Str((*k).to_string()).write(s);
                    s.push(':');
                    v.write(s);
                }
                s.push('}');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_compact_json() {
        let j = Json::Obj(vec![
            ("name", Json::Str("a * 2 \"f64\"".into())),
            ("ms", Json::nums(&[1.5, f64::NAN])),
            ("n", Json::Int(3)),
            ("x", Json::Null),
        ]);
        assert_eq!(
            j.render(),
            r#"{"name":"a * 2 \"f64\"","ms":[1.5,null],"n":3,"x":null}"#
        );
    }
}
