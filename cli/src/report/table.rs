//! Plain-text tables for stdout: right-aligned numbers, a header rule, nothing else.

/// A text table built row by row.
#[derive(Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    pub fn render(&self) -> String {
        let cols = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let mut width = vec![0usize; cols];
        for r in self.rows.iter().chain([&self.header]) {
            for (k, c) in r.iter().enumerate() {
                width[k] = width[k].max(c.chars().count());
            }
        }
        let line = |r: &Vec<String>| {
            let mut s = String::new();
            for (k, w) in width.iter().enumerate() {
                let c = r.get(k).map(String::as_str).unwrap_or("");
                let pad = w - c.chars().count();
                if k == 0 {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str("  ");
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
            }
            s.trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * cols.saturating_sub(1)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

/// Formats a number with thousands separators (integers) for counts.
pub fn count(v: f64) -> String {
    let r = v.round();
    if (v - r).abs() > 1e-9 && v.abs() < 1000.0 {
        return format!("{v:.1}");
    }
    let s = format!("{}", r as i128);
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    format!("{sign}{out}")
}

/// Milliseconds with sensible precision.
pub fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(["method", "ms"]);
        t.row(["sap", "1.5"]);
        t.row(["brute_force", "1234"]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "method         ms");
        assert_eq!(lines[2], "sap           1.5");
        assert_eq!(lines[3], "brute_force  1234");
    }

    #[test]
    fn counts_get_separators() {
        assert_eq!(count(12_497_500.0), "12,497,500");
        assert_eq!(count(-1000.0), "-1,000");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(2.5), "2.5");
        assert_eq!(count(721_405.6), "721,406");
    }
}
