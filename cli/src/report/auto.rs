//! The table `auto-bench` prints: per scene, auto's choice and time beside the fastest method.

use crate::report::table::{Table, ms};
use crate::run::auto_bench::AutoRow;
use crate::run::row::device_lines;

/// One line per scene: auto's time and choice, the fastest method and its time, the ratio, and
/// every method's time (`>budget` where its first frame ran past the budget).
pub fn auto_table(rows: &[AutoRow]) -> String {
    let mut t = Table::new([
        "scene",
        "n",
        "backend",
        "auto ms",
        "auto chose",
        "best",
        "best ms",
        "ratio",
        "verified",
    ]);
    for r in rows {
        t.row([
            r.scene.clone(),
            r.n.to_string(),
            r.backend.as_str().to_string(),
            ms(r.auto_ms),
            r.chosen
                .as_ref()
                .map_or("-".into(), |c| c.method.name().to_string()),
            r.best_method.clone(),
            ms(r.best_ms),
            format!("{:.2}", r.ratio),
            match r.verified {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => "-".into(),
            },
        ]);
    }
    let mut out = t.render();
    out += &device_lines(rows.iter().map(|r| (r.backend.as_str(), r.device.as_str())));
    for r in rows {
        let times: Vec<String> = r
            .method_ms
            .iter()
            .map(|(m, t)| format!("{m} {}", t.map_or(">budget".into(), ms)))
            .collect();
        let why = r
            .chosen
            .as_ref()
            .map_or(String::new(), |c| c.reason.clone());
        out += &format!(
            "{} n = {} [{}]: auto chose {}; {}\n",
            r.scene,
            r.n,
            r.backend.as_str(),
            why,
            times.join(", ")
        );
    }
    let worst = rows.iter().map(|r| r.ratio).fold(0.0, f64::max);
    let within = rows.iter().filter(|r| r.ratio <= 1.25).count();
    out += &format!(
        "auto within 1.25x of the fastest on {within} of {} scenes (worst {worst:.2}x)\n",
        rows.len()
    );
    out
}
