//! The coarse quantizer of a host-vector index (M-3, issue 13 item 5: "the index, not a
//! scan"): an inverted-file (IVF) partition of one session's host vectors.
//!
//! The unit vectors of a scope are clustered by spherical k-means into `k` lists, each
//! with a unit centroid; every record sits in the list of its nearest centroid (largest
//! dot product). A query reads the `k` centroids, then the lists nearest to it, nearest
//! first, until they hold at least [`PROBE_CANDIDATES`] records, and only those records'
//! cosines are computed: the work of one query is `k + PROBE_CANDIDATES` (plus one list)
//! dot products, whatever the size of the scope. A scope below [`MIN_RECORDS`] records has
//! no partition (its exact scan is cheaper than the bookkeeping).
//!
//! Training is deterministic: the sample is every `n / m`-th vector in scope order, the
//! first centroids are evenly spaced sample members, [`ITERATIONS`] rounds of Lloyd's
//! algorithm (assign to the nearest centroid, each centroid the normalised mean of its
//! members; a centroid that loses every member keeps its place). No randomness, no
//! clock: same records in the same order, same lists.

use super::embed;

/// Below this many host vectors a scope keeps no partition: a query scans them exactly.
pub const MIN_RECORDS: usize = 4096;
/// A query reads the nearest lists until they hold at least this many records (the
/// candidates whose cosine is computed), then stops.
pub const PROBE_CANDIDATES: usize = 2048;
/// Most lists a partition has.
pub const MAX_LISTS: usize = 128;
/// Sample members per list used to train the centroids.
const SAMPLE_PER_LIST: usize = 24;
/// Lloyd rounds of training.
const ITERATIONS: usize = 6;

/// The number of lists for `n` vectors: `sqrt(n / 4)`, rounded, in `8..=MAX_LISTS`.
pub fn lists_for(n: usize) -> usize {
    (((n as f64) / 4.0).sqrt().round() as usize).clamp(8, MAX_LISTS)
}

/// One scope's partition.
#[derive(Debug, Clone)]
pub(crate) struct Ivf {
    /// Unit centroids, one per list.
    pub centroids: Vec<Vec<f32>>,
    /// Slots of each list's records.
    pub lists: Vec<Vec<u32>>,
    /// Each list's vectors, one after the other in the order of `lists` (a copy of the
    /// records' vectors: a query reads a list front to back instead of chasing each
    /// record's vector around memory).
    pub vectors: Vec<Vec<f32>>,
    /// Vector components.
    pub dim: usize,
    /// Slot -> list (`u32::MAX`: the slot is in none).
    pub list_of: Vec<u32>,
    /// Number of vectors when the centroids were trained (the scope is trained again
    /// when it has grown to twice this).
    pub trained_at: usize,
}

/// The index of the centroid nearest to `v` (largest dot product; ties: the lower index).
fn nearest(centroids: &[Vec<f32>], v: &[f32]) -> u32 {
    let mut best = (0u32, f32::NEG_INFINITY);
    for (i, c) in centroids.iter().enumerate() {
        let d = embed::dot(c, v);
        if d > best.1 {
            best = (u32::try_from(i).unwrap_or(u32::MAX), d);
        }
    }
    best.0
}

/// Normalised mean; `None` when the members cancel out.
fn mean(members: &[&[f32]], dim: usize) -> Option<Vec<f32>> {
    let mut acc = vec![0f32; dim];
    for m in members {
        for (a, x) in acc.iter_mut().zip(m.iter()) {
            *a += *x;
        }
    }
    embed::normalize(&acc)
}

impl Ivf {
    /// Trains a partition of `vectors` (`(slot, unit vector)` in scope order) and puts
    /// every one in its list. `slots`: the scope's slot count (for `list_of`).
    pub fn train(vectors: &[(u32, &[f32])], slots: usize, dim: usize) -> Ivf {
        let n = vectors.len();
        let k = lists_for(n).min(n.max(1));
        let m = (k * SAMPLE_PER_LIST).min(n);
        let sample: Vec<&[f32]> = (0..m).filter_map(|i| vectors.get(i * n / m.max(1)).map(|x| x.1)).collect();
        let mut centroids: Vec<Vec<f32>> =
            (0..k).filter_map(|i| sample.get(i * sample.len() / k.max(1)).map(|v| v.to_vec())).collect();
        for _ in 0..ITERATIONS {
            let mut members: Vec<Vec<&[f32]>> = vec![Vec::new(); centroids.len()];
            for v in &sample {
                if let Some(g) = members.get_mut(nearest(&centroids, v) as usize) {
                    g.push(v);
                }
            }
            for (c, g) in centroids.iter_mut().zip(&members) {
                if let Some(u) = (!g.is_empty()).then(|| mean(g, dim)).flatten() {
                    *c = u;
                }
            }
        }
        let mut ivf = Ivf::empty(centroids, slots, dim, n);
        for &(slot, v) in vectors {
            ivf.insert(slot, v);
        }
        ivf
    }

    /// A partition with these centroids and no records.
    pub fn empty(centroids: Vec<Vec<f32>>, slots: usize, dim: usize, trained_at: usize) -> Ivf {
        let k = centroids.len();
        Ivf { lists: vec![Vec::new(); k], vectors: vec![Vec::new(); k], dim, centroids, list_of: vec![u32::MAX; slots], trained_at }
    }

    /// Puts `slot` (unit vector `v`) in its nearest list.
    pub fn insert(&mut self, slot: u32, v: &[f32]) {
        let l = nearest(&self.centroids, v);
        self.insert_in(slot, v, l);
    }

    /// Puts `slot` (unit vector `v`) in list `l` (below the list count).
    pub fn insert_in(&mut self, slot: u32, v: &[f32], l: u32) {
        if self.list_of.len() <= slot as usize {
            self.list_of.resize(slot as usize + 1, u32::MAX);
        }
        if let Some(x) = self.list_of.get_mut(slot as usize) {
            *x = l;
        }
        if let (Some(list), Some(vs)) = (self.lists.get_mut(l as usize), self.vectors.get_mut(l as usize)) {
            list.push(slot);
            vs.extend_from_slice(v);
        }
    }

    /// Takes `slot` out of its list.
    pub fn remove(&mut self, slot: u32) {
        let Some(x) = self.list_of.get_mut(slot as usize) else { return };
        let l = std::mem::replace(x, u32::MAX);
        let (Some(list), Some(vs)) = (self.lists.get_mut(l as usize), self.vectors.get_mut(l as usize)) else { return };
        let Some(at) = list.iter().position(|&s| s == slot) else { return };
        // the last member takes the removed one's place, in both arrays
        list.swap_remove(at);
        let last = vs.len().saturating_sub(self.dim);
        if at * self.dim < last {
            vs.copy_within(last.., at * self.dim);
        }
        vs.truncate(last);
    }

    /// The lists nearest to the unit query `q`, nearest first, until they hold at least
    /// [`PROBE_CANDIDATES`] records (or every list is taken).
    pub fn nearest_lists(&self, q: &[f32]) -> Vec<usize> {
        let mut order: Vec<(usize, f32)> = self.centroids.iter().enumerate().map(|(i, c)| (i, embed::dot(c, q))).collect();
        order.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut held = 0;
        let mut out = Vec::new();
        for (i, _) in order {
            if held >= PROBE_CANDIDATES {
                break;
            }
            held += self.lists.get(i).map_or(0, Vec::len);
            out.push(i);
        }
        out
    }

    /// The slots of [`Ivf::nearest_lists`].
    pub fn probe(&self, q: &[f32]) -> Vec<u32> {
        self.nearest_lists(q).into_iter().filter_map(|i| self.lists.get(i)).flatten().copied().collect()
    }

    /// `(slot, dot product with q)` of every record of `lists`, read list by list.
    pub fn scores(&self, q: &[f32], lists: &[usize]) -> Vec<(u32, f32)> {
        let mut out = Vec::new();
        for &i in lists {
            let (Some(slots), Some(vs)) = (self.lists.get(i), self.vectors.get(i)) else { continue };
            out.extend(slots.iter().zip(vs.chunks_exact(self.dim.max(1))).map(|(&s, v)| (s, embed::dot(q, v))));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_grow_with_the_square_root() {
        assert_eq!(lists_for(4096), 32);
        assert_eq!(lists_for(100_000), MAX_LISTS);
        assert_eq!(lists_for(10), 8);
    }
}
