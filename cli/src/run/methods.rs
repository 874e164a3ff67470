//! Method lists as the tool's options name them (`--methods grid,sap,all,peers`), over the
//! library's names ([`Method`], `auto`, the peers).

use sweepfan::Method;
use sweepfan::error::{Error, Result};
use sweepfan::registry::{AUTO, PEER_NAMES, unknown_method};

/// Whether `name` is a method the library builds by name: a [`Method`], `auto` or a peer.
pub fn is_method_name(name: &str) -> bool {
    name == AUTO || PEER_NAMES.contains(&name) || Method::parse(name).is_ok()
}

/// Parses a comma-separated method list; `all` expands to every [`Method`] (not `auto`, which
/// runs one of them).
pub fn parse_methods(list: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if item == "all" {
            out.extend(Method::ALL.iter().map(|m| m.name().to_string()));
        } else if item == "peers" {
            out.extend(PEER_NAMES.iter().map(|s| s.to_string()));
        } else if PEER_NAMES.contains(&item) || item == AUTO {
            out.push(item.to_string());
        } else {
            out.push(
                Method::parse(item)
                    .map_err(|_| unknown_method(item, true))?
                    .name()
                    .to_string(),
            );
        }
    }
    if out.is_empty() {
        return Err(Error::invalid_argument("methods", "empty method list"));
    }
    // Each method once, where it was first named.
    let mut seen = std::collections::HashSet::new();
    out.retain(|m| seen.insert(m.clone()));
    Ok(out)
}
