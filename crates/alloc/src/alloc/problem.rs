//! The bipartite model of OGASched: ports (job types) l ∈ L on one side, computing instances
//! r ∈ R on the other, resource types k ∈ K; a job of type l requests a_l^k of resource k,
//! instance r has c_r^k of it; a link (l, r) says instance r can serve port l. An
//! [`Allocation`] holds y_(l,r)^k for every link and resource.
//!
//! Allocations are stored link-major (`y[e · K + k]` for link e), links sorted by instance then
//! port, so that the links of one instance (the blocks of the projection) are contiguous.

use super::utility::Gain;

/// A link (l, r): instance `instance` may serve port `port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Link {
    /// The port (job type) l.
    pub port: usize,
    /// The instance r.
    pub instance: usize,
}

/// What a [`Problem`] is built from (plain vectors, easy to write by hand).
#[derive(Debug, Clone, Default)]
pub struct ProblemSpec {
    /// a_l^k: `requests[l][k]`, finite and ≥ 0.
    pub requests: Vec<Vec<f64>>,
    /// c_r^k: `capacities[r][k]`, finite and ≥ 0 (0: the instance has none of k).
    pub capacities: Vec<Vec<f64>>,
    /// The links (port, instance); each at most once.
    pub links: Vec<(usize, usize)>,
    /// f_r^k: `gains[r][k]`, α finite and > 0.
    pub gains: Vec<Vec<Gain>>,
    /// β_k: `betas[k]`, finite and ≥ 0.
    pub betas: Vec<f64>,
}

/// A [`ProblemSpec`] that does not describe a model: the field and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ProblemError {
    /// The offending field (`requests[2][1]`).
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> ProblemError {
    ProblemError {
        field: field.into(),
        message: message.into(),
    }
}

/// The bipartite model (validated, immutable).
#[derive(Debug, Clone)]
pub struct Problem {
    k: usize,
    requests: Vec<f64>,
    capacities: Vec<f64>,
    links: Vec<Link>,
    instance_start: Vec<usize>,
    port_links: Vec<Vec<usize>>,
    gains: Vec<Gain>,
    betas: Vec<f64>,
}

fn check_matrix(
    name: &str,
    rows: &[Vec<f64>],
    k: usize,
    ok: impl Fn(f64) -> bool,
    want: &str,
) -> Result<Vec<f64>, ProblemError> {
    let mut flat = Vec::with_capacity(rows.len() * k);
    for (i, row) in rows.iter().enumerate() {
        if row.len() != k {
            return Err(bad(
                format!("{name}[{i}]"),
                format!(
                    "expected {k} values (one per resource type), got {}",
                    row.len()
                ),
            ));
        }
        for (j, &v) in row.iter().enumerate() {
            if !ok(v) {
                return Err(bad(
                    format!("{name}[{i}][{j}]"),
                    format!("expected {want}, got {v}"),
                ));
            }
            flat.push(v);
        }
    }
    Ok(flat)
}

impl Problem {
    /// Validates `spec` and builds the model.
    pub fn new(spec: &ProblemSpec) -> Result<Problem, ProblemError> {
        let k = spec.betas.len();
        if k == 0 {
            return Err(bad("betas", "expected at least one resource type"));
        }
        for (j, &b) in spec.betas.iter().enumerate() {
            if !(b.is_finite() && b >= 0.0) {
                return Err(bad(
                    format!("betas[{j}]"),
                    format!("expected a finite β ≥ 0, got {b}"),
                ));
            }
        }
        let nonneg = |v: f64| v.is_finite() && v >= 0.0;
        let requests = check_matrix("requests", &spec.requests, k, nonneg, "a finite value ≥ 0")?;
        let capacities = check_matrix(
            "capacities",
            &spec.capacities,
            k,
            nonneg,
            "a finite value ≥ 0",
        )?;
        let (nl, nr) = (spec.requests.len(), spec.capacities.len());
        if spec.gains.len() != nr {
            return Err(bad(
                "gains",
                format!(
                    "expected {nr} rows (one per instance), got {}",
                    spec.gains.len()
                ),
            ));
        }
        let mut gains = Vec::with_capacity(nr * k);
        for (r, row) in spec.gains.iter().enumerate() {
            if row.len() != k {
                return Err(bad(
                    format!("gains[{r}]"),
                    format!(
                        "expected {k} gains (one per resource type), got {}",
                        row.len()
                    ),
                ));
            }
            for (j, g) in row.iter().enumerate() {
                if !(g.alpha.is_finite() && g.alpha > 0.0) {
                    return Err(bad(
                        format!("gains[{r}][{j}].alpha"),
                        format!("expected a finite α > 0, got {}", g.alpha),
                    ));
                }
                gains.push(*g);
            }
        }
        let mut links = Vec::with_capacity(spec.links.len());
        for (i, &(port, instance)) in spec.links.iter().enumerate() {
            if port >= nl {
                return Err(bad(
                    format!("links[{i}].port"),
                    format!("port {port} out of range (there are {nl} ports)"),
                ));
            }
            if instance >= nr {
                return Err(bad(
                    format!("links[{i}].instance"),
                    format!("instance {instance} out of range (there are {nr} instances)"),
                ));
            }
            links.push(Link { port, instance });
        }
        links.sort_by_key(|l| (l.instance, l.port));
        if let Some(w) = links.windows(2).find(|w| w[0] == w[1]) {
            return Err(bad(
                "links",
                format!(
                    "link (port {}, instance {}) listed twice",
                    w[0].port, w[0].instance
                ),
            ));
        }
        let mut instance_start = vec![0; nr + 1];
        for l in &links {
            instance_start[l.instance + 1] += 1;
        }
        for r in 0..nr {
            instance_start[r + 1] += instance_start[r];
        }
        let mut port_links = vec![Vec::new(); nl];
        for (e, l) in links.iter().enumerate() {
            port_links[l.port].push(e);
        }
        Ok(Problem {
            k,
            requests,
            capacities,
            links,
            instance_start,
            port_links,
            gains,
            betas: spec.betas.clone(),
        })
    }

    /// |L|, the number of ports (job types).
    pub fn ports(&self) -> usize {
        self.port_links.len()
    }

    /// |R|, the number of instances.
    pub fn instances(&self) -> usize {
        self.instance_start.len() - 1
    }

    /// |K|, the number of resource types.
    pub fn resources(&self) -> usize {
        self.k
    }

    /// Every link, sorted by instance then port; an allocation's link index refers to this.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// The link indices of instance `r` (its ports in increasing order).
    pub fn instance_links(&self, r: usize) -> std::ops::Range<usize> {
        self.instance_start[r]..self.instance_start[r + 1]
    }

    /// The link indices of port `l` (its instances in increasing order).
    pub fn port_links(&self, l: usize) -> &[usize] {
        &self.port_links[l]
    }

    /// a_l^k.
    #[inline]
    pub fn request(&self, l: usize, k: usize) -> f64 {
        self.requests[l * self.k + k]
    }

    /// c_r^k.
    #[inline]
    pub fn capacity(&self, r: usize, k: usize) -> f64 {
        self.capacities[r * self.k + k]
    }

    /// f_r^k.
    #[inline]
    pub fn gain(&self, r: usize, k: usize) -> &Gain {
        &self.gains[r * self.k + k]
    }

    /// β_k.
    #[inline]
    pub fn beta(&self, k: usize) -> f64 {
        self.betas[k]
    }

    /// Copies every c_r^k into `out` (`out[r · K + k]`): the free capacity before allocating.
    pub fn fill_capacities(&self, out: &mut Vec<f64>) {
        out.clear();
        out.extend_from_slice(&self.capacities);
    }

    /// Checks that `y` lies in the polytope {0 ≤ y_(l,r)^k ≤ a_l^k, Σ_l y_(l,r)^k ≤ c_r^k},
    /// up to `tol` relative to the bound (`tol · max(1, bound)`); also that ports whose
    /// `demand` is 0 get nothing, when `demand` is given. The error says which bound is broken.
    pub fn check_feasible(
        &self,
        y: &Allocation,
        demand: Option<&[f64]>,
        tol: f64,
    ) -> Result<(), String> {
        let k = self.k;
        if y.values.len() != self.links.len() * k {
            return Err(format!(
                "allocation has {} values, the problem {} links × {k} resources",
                y.values.len(),
                self.links.len()
            ));
        }
        for (e, link) in self.links.iter().enumerate() {
            for j in 0..k {
                let v = y.values[e * k + j];
                let a = self.request(link.port, j);
                if !(v >= -tol && v <= a + tol * a.max(1.0)) {
                    return Err(format!(
                        "y[port {}, instance {}, resource {j}] = {v} outside [0, a = {a}]",
                        link.port, link.instance
                    ));
                }
                if demand.is_some_and(|x| x[link.port] <= 0.0) && v != 0.0 {
                    return Err(format!(
                        "y[port {}, instance {}, resource {j}] = {v} but the port has no demand",
                        link.port, link.instance
                    ));
                }
            }
        }
        for r in 0..self.instances() {
            for j in 0..k {
                let s: f64 = self.instance_links(r).map(|e| y.values[e * k + j]).sum();
                let c = self.capacity(r, j);
                if s > c + tol * c.max(1.0) {
                    return Err(format!(
                        "instance {r}, resource {j}: Σ y = {s} exceeds c = {c}"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// An allocation y: y_(l,r)^k for every link (l, r) and resource k.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    k: usize,
    values: Vec<f64>,
}

impl Allocation {
    /// All zeros, sized for `p`.
    pub fn zeros(p: &Problem) -> Self {
        Allocation {
            k: p.k,
            values: vec![0.0; p.links.len() * p.k],
        }
    }

    /// y_(l,r)^k of link `e`.
    #[inline]
    pub fn get(&self, e: usize, k: usize) -> f64 {
        self.values[e * self.k + k]
    }

    /// Sets y_(l,r)^k of link `e`.
    #[inline]
    pub fn set(&mut self, e: usize, k: usize, v: f64) {
        self.values[e * self.k + k] = v;
    }

    /// The flat values, link-major.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The flat values, link-major, mutable.
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Sets every value to 0.
    pub fn clear(&mut self) {
        self.values.fill(0.0);
    }

    /// Σ_r y_(l,r)^k: what port `l` gets of resource `k` in total.
    pub fn port_total(&self, p: &Problem, l: usize, k: usize) -> f64 {
        p.port_links(l).iter().map(|&e| self.get(e, k)).sum()
    }

    /// Σ_l y_(l,r)^k: what instance `r` gives of resource `k` in total.
    pub fn instance_total(&self, p: &Problem, r: usize, k: usize) -> f64 {
        p.instance_links(r).map(|e| self.get(e, k)).sum()
    }

    /// Is `self` sized for `p`?
    pub fn fits(&self, p: &Problem) -> bool {
        self.k == p.k && self.values.len() == p.links.len() * p.k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::utility::Utility;

    fn spec() -> ProblemSpec {
        let g = Gain::new(Utility::Linear, 1.0);
        ProblemSpec {
            requests: vec![vec![2.0, 1.0], vec![1.0, 3.0]],
            capacities: vec![vec![4.0, 4.0], vec![1.0, 0.0], vec![2.0, 2.0]],
            links: vec![(1, 0), (0, 0), (0, 2), (1, 1)],
            gains: vec![vec![g, g]; 3],
            betas: vec![0.3, 0.5],
        }
    }

    #[test]
    fn links_are_sorted_by_instance_and_indexed_both_ways() {
        let p = Problem::new(&spec()).unwrap();
        assert_eq!((p.ports(), p.instances(), p.resources()), (2, 3, 2));
        let order: Vec<(usize, usize)> = p.links().iter().map(|l| (l.port, l.instance)).collect();
        assert_eq!(order, vec![(0, 0), (1, 0), (1, 1), (0, 2)]);
        assert_eq!(p.instance_links(0), 0..2);
        assert_eq!(p.instance_links(1), 2..3);
        assert_eq!(p.port_links(0), &[0, 3]);
        assert_eq!(p.port_links(1), &[1, 2]);
        assert_eq!(p.request(1, 1), 3.0);
        assert_eq!(p.capacity(2, 0), 2.0);
    }

    type Edit = Box<dyn Fn(&mut ProblemSpec)>;

    #[test]
    fn bad_specs_name_the_field() {
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|s| s.requests[1][0] = -1.0), "requests[1][0]"),
            (
                Box::new(|s| s.capacities[2][1] = f64::NAN),
                "capacities[2][1]",
            ),
            (
                Box::new(|s| s.capacities[0].pop().map(drop).unwrap_or(())),
                "capacities[0]",
            ),
            (Box::new(|s| s.links.push((2, 0))), "links[4].port"),
            (Box::new(|s| s.links.push((0, 3))), "links[4].instance"),
            (Box::new(|s| s.links.push((0, 0))), "links"),
            (Box::new(|s| s.gains[1][0].alpha = 0.0), "gains[1][0].alpha"),
            (Box::new(|s| s.gains.pop().map(drop).unwrap_or(())), "gains"),
            (Box::new(|s| s.betas[1] = -0.1), "betas[1]"),
            (Box::new(|s| s.betas.clear()), "betas"),
        ];
        for (edit, field) in cases {
            let mut s = spec();
            edit(&mut s);
            let e = Problem::new(&s).unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
    }

    #[test]
    fn feasibility_check_catches_each_bound() {
        let p = Problem::new(&spec()).unwrap();
        let mut y = Allocation::zeros(&p);
        assert!(p.check_feasible(&y, None, 1e-9).is_ok());
        y.set(0, 0, 2.0); // port 0 on instance 0: a = 2
        y.set(1, 0, 1.0); // port 1 on instance 0: a = 1; Σ = 3 ≤ 4
        assert!(p.check_feasible(&y, None, 1e-9).is_ok());
        y.set(0, 0, 2.5);
        assert!(
            p.check_feasible(&y, None, 1e-9)
                .unwrap_err()
                .contains("outside")
        );
        y.set(0, 0, 2.0);
        y.set(2, 0, 1.0); // instance 1 has c = 1 of resource 0: ok
        y.set(2, 1, 0.5); // but none of resource 1
        assert!(
            p.check_feasible(&y, None, 1e-9)
                .unwrap_err()
                .contains("exceeds")
        );
        y.set(2, 1, 0.0);
        let err = p.check_feasible(&y, Some(&[1.0, 0.0]), 1e-9).unwrap_err();
        assert!(err.contains("no demand"), "{err}");
        assert_eq!(y.port_total(&p, 1, 0), 2.0);
        assert_eq!(y.instance_total(&p, 0, 0), 3.0);
    }
}
