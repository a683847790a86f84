//! "Did you mean …?" for a name the user mistyped: the closest known name by edit distance,
//! when it is close enough to be a typo.

/// The known name closest to `name` (Levenshtein distance), if it is at most a third of the
/// longer name's length away (at least 1, so one typo in a short name counts), the first such
/// in `known`'s order on ties.
pub fn closest_name<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = strsim::levenshtein(name, k);
        let limit = (name.chars().count().max(k.chars().count()) / 3).max(1);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// ` (did you mean `x`?)` for the closest known name, or nothing.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest_name(name, known).map_or_else(String::new, |k| format!(" (did you mean `{k}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_its_name_and_nonsense_finds_none() {
        let known = ["closest", "headroom", "worker-headroom", "greedy-pull"];
        assert_eq!(closest_name("headrom", known), Some("headroom"));
        assert_eq!(
            closest_name("worker-hedroom", known),
            Some("worker-headroom")
        );
        assert_eq!(closest_name("greedy_pull", known), Some("greedy-pull"));
        assert_eq!(closest_name("clsoest", known), Some("closest"));
        assert_eq!(closest_name("xyz", known), None);
        assert_eq!(closest_name("farthest", known), None);
        assert_eq!(
            did_you_mean("headrom", known),
            " (did you mean `headroom`?)"
        );
        assert_eq!(did_you_mean("xyz", known), "");
    }
}
