//! An actor's output as bytes, for actors in other processes (Ray tasks): little-endian, every
//! f32 and f64 bit for bit, so the learner reads exactly what a thread would have handed it.
//! Layout: the magic `CXAPEX1\n`, the job, the episode's figures, then per transition its
//! arrays, each prefixed with its length.

use super::actor::{ActorJob, ActorOutput};
use crate::agent::Transition;

const MAGIC: &[u8; 8] = b"CXAPEX1\n";

/// `out` as bytes.
pub fn encode(out: &ActorOutput) -> Vec<u8> {
    let mut w = Vec::new();
    w.extend_from_slice(MAGIC);
    let u = |w: &mut Vec<u8>, x: u64| w.extend_from_slice(&x.to_le_bytes());
    let f = |w: &mut Vec<u8>, x: f64| w.extend_from_slice(&x.to_le_bytes());
    u(&mut w, out.job.episode as u64);
    u(&mut w, out.job.actor as u64);
    f(&mut w, out.lambda);
    u(&mut w, out.seed);
    u(&mut w, out.windows as u64);
    u(&mut w, out.end.len() as u64);
    w.extend_from_slice(out.end.as_bytes());
    f(&mut w, out.success_ratio);
    f(&mut w, out.mean_reward);
    f(&mut w, out.epsilon);
    f(&mut w, out.sample_s);
    u(&mut w, out.transitions.len() as u64);
    for (t, &p) in out.transitions.iter().zip(&out.priorities) {
        for v in [&t.state, &t.values, &t.weights, &t.next_state] {
            u(&mut w, v.len() as u64);
            for x in v {
                w.extend_from_slice(&x.to_le_bytes());
            }
        }
        u(&mut w, t.actions.len() as u64);
        for a in &t.actions {
            w.extend_from_slice(&a.to_le_bytes());
        }
        w.push(u8::from(t.done));
        w.extend_from_slice(&p.to_le_bytes());
    }
    w
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {} (wanted {n} more)", self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_bits(self.u64()?))
    }

    fn len(&mut self) -> Result<usize, String> {
        let n = self.u64()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.bytes.len())
            .ok_or_else(|| format!("a length of {n} at byte {} exceeds the input", self.at - 8))
    }

    fn f32s(&mut self) -> Result<Vec<f32>, String> {
        let n = self.len()?;
        Ok(self
            .take(4 * n)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect())
    }
}

/// An actor's output from `bytes` written by [`encode`], or where they are not.
pub fn decode(bytes: &[u8]) -> Result<ActorOutput, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(MAGIC.len()).ok() != Some(MAGIC.as_slice()) {
        return Err("not an Ape-X actor's output (bad magic)".into());
    }
    let job = ActorJob {
        episode: r.len()?,
        actor: r.len()?,
    };
    let lambda = r.f64()?;
    let seed = r.u64()?;
    let windows = r.len()?;
    let n = r.len()?;
    let end = String::from_utf8(r.take(n)?.to_vec()).map_err(|e| e.to_string())?;
    let (success_ratio, mean_reward, epsilon, sample_s) = (r.f64()?, r.f64()?, r.f64()?, r.f64()?);
    let count = r.len()?;
    let (mut transitions, mut priorities) = (Vec::new(), Vec::new());
    for _ in 0..count {
        let (state, values, weights, next_state) = (r.f32s()?, r.f32s()?, r.f32s()?, r.f32s()?);
        let k = r.len()?;
        let actions = r
            .take(4 * k)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let done = r.take(1)?[0] != 0;
        priorities.push(f32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes")));
        transitions.push(Transition {
            state,
            actions,
            values,
            weights,
            next_state,
            done,
        });
    }
    if r.at != bytes.len() {
        return Err(format!("{} bytes left over", bytes.len() - r.at));
    }
    Ok(ActorOutput {
        job,
        transitions,
        priorities,
        lambda,
        seed,
        windows,
        end,
        success_ratio,
        mean_reward,
        epsilon,
        sample_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_bit_for_bit_and_refuses_damage() {
        let t = Transition::taken(
            vec![0.1, f32::MIN_POSITIVE],
            vec![1],
            &[-3.25],
            &[1.0],
            2,
            vec![1e-30, 7.0],
            true,
        );
        let out = ActorOutput {
            job: ActorJob {
                episode: 9,
                actor: 3,
            },
            transitions: vec![t.clone(), Transition { done: false, ..t }],
            priorities: vec![0.5, 1.0 / 3.0],
            lambda: 61.7,
            seed: u64::MAX,
            windows: 30,
            end: "horizon".into(),
            success_ratio: 0.875,
            mean_reward: -0.1,
            epsilon: 0.4f64.powi(8),
            sample_s: 0.25,
        };
        let bytes = encode(&out);
        assert_eq!(decode(&bytes).unwrap(), out);
        assert!(
            decode(&bytes[..bytes.len() - 1])
                .unwrap_err()
                .contains("truncated")
        );
        assert!(decode(b"garbage").unwrap_err().contains("magic"));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(decode(&extra).unwrap_err().contains("left over"));
    }
}
