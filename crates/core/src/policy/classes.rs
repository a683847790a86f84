//! Stream classes for per-class dispatch: a scheduler may use a different policy for each class
//! of stream. The rule, in the terms of docs/model.md:
//!
//! - A stream's class is its **application class** (docs/model.md §4) when it names one of the classes.
//! - Otherwise (an application the classes do not know, or an anonymous client at the gateway)
//!   its class is the one its **docs/model.md §9 demand bucket** (max-delay range × rate range) maps to.
//!   The bucket map comes from the workload the classes were made from: each bucket goes to the
//!   class that offers the most queries in it; a bucket no class reaches goes to the class of the
//!   nearest reached bucket (by deadline range first, then rate range).
//!
//! The single-class grouping (every stream in one class, `all`) is the per-scheduler action of
//! docs/model.md §9.

use crate::observe::DemandBuckets;
use crate::rng::{Purpose, stream_rng};
use crate::workload::Workload;

/// Streams drawn per application class to estimate where its queries fall among the buckets.
const BUCKET_SAMPLES: usize = 4096;

/// How streams are grouped into classes (see the module documentation for the rule).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClasses {
    names: Vec<String>,
    buckets: DemandBuckets,
    by_bucket: Vec<u16>,
}

impl StreamClasses {
    /// One class, `all`, holding every stream.
    pub fn single() -> Self {
        let buckets = DemandBuckets::default();
        Self {
            names: vec!["all".into()],
            by_bucket: vec![0; buckets.len()],
            buckets,
        }
    }

    /// One class per application class of `workload`, in its order, with the bucket map
    /// estimated from the workload's own distributions (a fixed seed: always the same map).
    pub fn from_workload(workload: &Workload, buckets: &DemandBuckets) -> Self {
        let nb = buckets.len();
        // Expected queries per (bucket, class): share × rate × duration of sampled streams.
        let mut mass = vec![0.0f64; nb * workload.apps.len()];
        let total_share: f64 = workload.apps.iter().map(|a| a.share).sum();
        for (c, app) in workload.apps.iter().enumerate() {
            let mut rng = stream_rng(0, Purpose::Other, 0x636c_6173, c as u64);
            for _ in 0..BUCKET_SAMPLES {
                let rate = app.rate_qps.sample(&mut rng);
                let delay = app.max_delay_ms.sample(&mut rng);
                let duration = app.duration_s.mean();
                let b = buckets.index(delay, rate);
                mass[b * workload.apps.len() + c] +=
                    app.share / total_share * rate * duration / BUCKET_SAMPLES as f64;
            }
        }
        let apps = workload.apps.len();
        let reached: Vec<Option<u16>> = (0..nb)
            .map(|b| {
                let row = &mass[b * apps..(b + 1) * apps];
                let best = (0..apps).fold(0, |m, c| if row[c] > row[m] { c } else { m });
                (row[best] > 0.0).then_some(best as u16)
            })
            .collect();
        let by_bucket = fill_unreached(&reached, buckets);
        Self {
            names: workload.apps.iter().map(|a| a.name.clone()).collect(),
            buckets: buckets.clone(),
            by_bucket,
        }
    }

    /// One class per demand bucket (docs/model.md §9.9): a stream's class is its bucket, never
    /// its application's name, so a workload of applications no checkpoint has seen is classed
    /// the same way as the one trained on. Names spell the bucket's ranges
    /// (`d<=100ms,r<=10qps`, `d>500ms,r>20qps`).
    pub fn per_bucket(buckets: &DemandBuckets) -> Self {
        let range = |edges: &[f64], i: usize, unit: &str, tag: &str| match edges.get(i) {
            Some(e) => format!("{tag}<={e}{unit}"),
            None => format!("{tag}>{}{unit}", edges.last().copied().unwrap_or(0.0)),
        };
        let rates = buckets.rate_edges_qps.len() + 1;
        let names = (0..buckets.len())
            .map(|b| {
                format!(
                    "{},{}",
                    range(&buckets.delay_edges_ms, b / rates, "ms", "d"),
                    range(&buckets.rate_edges_qps, b % rates, "qps", "r")
                )
            })
            .collect();
        Self {
            names,
            buckets: buckets.clone(),
            by_bucket: (0..buckets.len() as u16).collect(),
        }
    }

    /// Whether every class is one demand bucket ([`Self::per_bucket`]'s grouping).
    pub fn is_per_bucket(&self) -> bool {
        *self == Self::per_bucket(&self.buckets)
    }

    /// Classes with these names and this bucket map (e.g. read from a checkpoint); the error
    /// says what does not fit.
    pub fn new(
        names: Vec<String>,
        buckets: DemandBuckets,
        by_bucket: Vec<u16>,
    ) -> Result<Self, String> {
        if names.is_empty() || names.len() > usize::from(u16::MAX) {
            return Err(format!(
                "expected 1 to {} classes, got {}",
                u16::MAX,
                names.len()
            ));
        }
        if let Some(d) = names
            .iter()
            .enumerate()
            .find(|(i, n)| names[..*i].contains(n))
        {
            return Err(format!("duplicate class `{}`", d.1));
        }
        buckets.validate()?;
        if by_bucket.len() != buckets.len() {
            return Err(format!(
                "the bucket map has {} entries for {} buckets",
                by_bucket.len(),
                buckets.len()
            ));
        }
        if let Some(c) = by_bucket.iter().find(|c| usize::from(**c) >= names.len()) {
            return Err(format!(
                "the bucket map names class {c}, but there are {} classes",
                names.len()
            ));
        }
        Ok(Self {
            names,
            buckets,
            by_bucket,
        })
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no classes (never: there is always at least one).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Class names, in index order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The demand buckets of the fallback rule.
    pub fn buckets(&self) -> &DemandBuckets {
        &self.buckets
    }

    /// The class of each demand bucket.
    pub fn bucket_map(&self) -> &[u16] {
        &self.by_bucket
    }

    /// The class named `app`, if any.
    pub fn by_name(&self, app: &str) -> Option<usize> {
        self.names.iter().position(|n| n == app)
    }

    /// The class of a stream of application `app` (if known) with deadline `max_delay_ms` and
    /// rate `rate_qps`.
    pub fn class_of(&self, app: Option<&str>, max_delay_ms: f64, rate_qps: f64) -> usize {
        if self.names.len() == 1 {
            return 0;
        }
        app.and_then(|a| self.by_name(a)).unwrap_or_else(|| {
            usize::from(self.by_bucket[self.buckets.index(max_delay_ms, rate_qps)])
        })
    }

    /// For each application of `workload`: its class when the classes name it, else `None`
    /// (its streams are then classed by demand bucket, one by one).
    pub fn for_apps(&self, workload: &Workload) -> Vec<Option<u16>> {
        workload
            .apps
            .iter()
            .map(|a| {
                if self.names.len() == 1 {
                    Some(0)
                } else {
                    self.by_name(&a.name).map(|c| c as u16)
                }
            })
            .collect()
    }

    /// The class of bucket-classed streams (see [`Self::for_apps`]).
    pub fn class_of_bucket(&self, max_delay_ms: f64, rate_qps: f64) -> usize {
        usize::from(self.by_bucket[self.buckets.index(max_delay_ms, rate_qps)])
    }
}

/// Gives every bucket no class reaches the class of the nearest reached bucket: the smallest
/// distance in deadline ranges first, then in rate ranges, then the lower bucket index.
fn fill_unreached(reached: &[Option<u16>], buckets: &DemandBuckets) -> Vec<u16> {
    let rates = buckets.rate_edges_qps.len() + 1;
    let pos = |b: usize| ((b / rates) as i64, (b % rates) as i64);
    (0..reached.len())
        .map(|b| {
            reached[b].unwrap_or_else(|| {
                let (d, r) = pos(b);
                (0..reached.len())
                    .filter_map(|o| reached[o].map(|c| (o, c)))
                    .min_by_key(|(o, _)| {
                        let (od, or) = pos(*o);
                        ((od - d).abs(), (or - r).abs(), *o)
                    })
                    .map_or(0, |(_, c)| c)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Source;

    #[test]
    fn per_bucket_classes_ignore_application_names() {
        let b = DemandBuckets::default();
        let c = StreamClasses::per_bucket(&b);
        assert_eq!(c.len(), 12);
        assert_eq!(c.names()[0], "d<=100ms,r<=10qps");
        assert_eq!(c.names()[11], "d>500ms,r>20qps");
        assert!(c.is_per_bucket());
        // A known-looking name does not matter: the bucket decides.
        assert_eq!(c.class_of(Some("ar-overlay"), 80.0, 30.0), 2);
        assert_eq!(c.class_of(None, 900.0, 5.0), 9);
        assert!(c.for_apps(&two_apps()).iter().all(Option::is_none));
        assert!(!StreamClasses::from_workload(&two_apps(), &b).is_per_bucket());
        // Read back from its parts (a checkpoint), it is still per bucket.
        let back = StreamClasses::new(c.names().to_vec(), b.clone(), c.bucket_map().to_vec());
        assert!(back.unwrap().is_per_bucket());
    }

    fn two_apps() -> Workload {
        let src = Source::inline(
            "w.yaml",
            r#"
lambda_per_min: 10
access_delay_ms: 2
apps:
  - {name: fast, share: 1, task: detect, rate_qps: 30, frame_kb: 10, uplink_mbps: 80, max_delay_ms: {uniform: [50, 90]}, min_accuracy: 0, duration_s: 30}
  - {name: slow, share: 1, task: detect, rate_qps: 5, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 800, min_accuracy: 0, duration_s: 30}
"#,
        );
        Workload::from_source(&src, &crate::fixtures::profiles()).unwrap()
    }

    #[test]
    fn apps_by_name_then_by_bucket() {
        let c = StreamClasses::from_workload(&two_apps(), &DemandBuckets::default());
        assert_eq!(c.names(), ["fast", "slow"]);
        assert_eq!(c.class_of(Some("slow"), 60.0, 30.0), 1);
        // Unknown or anonymous: by bucket. Tight and fast → `fast`; loose and slow → `slow`.
        assert_eq!(c.class_of(Some("new-app"), 70.0, 30.0), 0);
        assert_eq!(c.class_of(None, 900.0, 5.0), 1);
        // Buckets no class reaches take the nearest reached one, deadline first: a tight
        // deadline at a slow rate is still `fast`; a 300 ms deadline is nearer `slow`.
        assert_eq!(c.class_of(None, 60.0, 5.0), 0);
        assert_eq!(c.class_of(None, 400.0, 30.0), 1);
        assert_eq!(c.for_apps(&two_apps()), vec![Some(0), Some(1)]);
    }

    #[test]
    fn single_class_holds_everything() {
        let c = StreamClasses::single();
        assert_eq!(c.len(), 1);
        assert_eq!(c.class_of(Some("fast"), 60.0, 30.0), 0);
        assert_eq!(c.for_apps(&two_apps()), vec![Some(0), Some(0)]);
    }

    #[test]
    fn bad_maps_are_refused() {
        let b = DemandBuckets::default();
        assert!(StreamClasses::new(vec![], b.clone(), vec![0; 12]).is_err());
        let e = StreamClasses::new(vec!["a".into(), "a".into()], b.clone(), vec![0; 12]);
        assert!(e.unwrap_err().contains("duplicate class `a`"));
        let e = StreamClasses::new(vec!["a".into()], b.clone(), vec![1; 12]);
        assert!(e.unwrap_err().contains("names class 1"));
        assert!(StreamClasses::new(vec!["a".into()], b, vec![0; 3]).is_err());
    }
}
