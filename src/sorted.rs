//! A small ordered map and set over a sorted `Vec` (binary search), used instead of
//! `std::collections::BTreeMap`/`BTreeSet` to keep the wasm module small: iteration is
//! in ascending key order exactly like the B-tree, at a fraction of the code per
//! key/value type. Inserts and removals are O(n) moves, fine for the index's sizes.
//! [`sort_by`] is a stable sort that shares one instantiation of the standard library's
//! sort (over indices) between every element type, for the same reason.

use std::borrow::Borrow;
use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`: the same order as `slice::sort_by`. The standard sort runs
/// once, over indices with a `dyn` comparator, so each element type costs only this
/// small wrapper instead of a whole sort implementation.
pub(crate) fn sort_by<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    {
        let items: &[T] = v;
        sort_indices(&mut order, &mut |a, b| match (items.get(a), items.get(b)) {
            (Some(x), Some(y)) => cmp(x, y),
            _ => Ordering::Equal,
        });
    }
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(order.iter().filter_map(|&i| slots.get_mut(i).and_then(Option::take)));
}

#[inline(never)]
fn sort_indices(order: &mut [usize], cmp: &mut dyn FnMut(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

/// Ordered map: entries kept sorted by key, keys unique.
#[derive(Debug, Clone)]
pub(crate) struct SortedMap<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap { items: Vec::new() }
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    /// An empty map.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.items.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// True when empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The value of `key`.
    pub(crate) fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        self.items.get(i).map(|(_, v)| v)
    }

    /// The value of `key`, mutably.
    #[allow(dead_code)] // kept for callers outside the memory index
    pub(crate) fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        self.items.get_mut(i).map(|(_, v)| v)
    }

    /// Inserts or replaces; returns the replaced value.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => self.items.get_mut(i).map(|slot| std::mem::replace(&mut slot.1, value)),
            Err(i) => {
                self.items.insert(i, (key, value));
                None
            }
        }
    }

    /// The value of `key`, inserted from `make` first when absent.
    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.items.insert(i, (key, make()));
                i
            }
        };
        // `i` is in bounds: found, or just inserted there.
        &mut self.items[i].1
    }

    /// Removes `key`; returns its value.
    pub(crate) fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let i = self.find(key).ok()?;
        Some(self.items.remove(i).1)
    }

    /// Entries in ascending key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.items.iter().map(|(k, v)| (k, v))
    }

    /// Entries with keys strictly greater than `key`, ascending.
    pub(crate) fn iter_after(&self, key: &K) -> impl Iterator<Item = (&K, &V)> {
        let start = self.items.partition_point(|(k, _)| k.cmp(key) != Ordering::Greater);
        self.items.get(start..).unwrap_or_default().iter().map(|(k, v)| (k, v))
    }

    /// Values in ascending key order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.items.iter().map(|(_, v)| v)
    }

    /// Values in ascending key order, mutably.
    #[allow(dead_code)] // kept for callers outside the memory index
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.items.iter_mut().map(|(_, v)| v)
    }

    /// Consumes the map into its entries, ascending.
    pub(crate) fn into_vec(self) -> Vec<(K, V)> {
        self.items
    }
}

/// Ordered set over [`SortedMap`].
#[derive(Debug, Clone)]
pub(crate) struct SortedSet<K> {
    map: SortedMap<K, ()>,
}

impl<K: Ord> SortedSet<K> {
    /// An empty set.
    pub(crate) fn new() -> Self {
        SortedSet { map: SortedMap::new() }
    }

    /// Adds `key`; true when it was not present.
    pub(crate) fn insert(&mut self, key: K) -> bool {
        self.map.insert(key, ()).is_none()
    }

    /// True when `key` is present.
    pub(crate) fn contains<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.map.find(key).is_ok()
    }

    /// Keys in ascending order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &K> {
        self.map.items.iter().map(|(k, _)| k)
    }

    /// Consumes the set into its keys, ascending.
    #[allow(dead_code)] // kept for callers outside the memory index
    pub(crate) fn into_vec(self) -> Vec<K> {
        self.map.items.into_iter().map(|(k, _)| k).collect()
    }
}

impl<K: Ord> FromIterator<K> for SortedSet<K> {
    /// The keys sorted once and deduplicated (the first of equal keys kept), not inserted
    /// one by one (O(n log n), not O(n^2) moves for keys in no order).
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        let mut keys: Vec<K> = iter.into_iter().collect();
        if !keys.windows(2).all(|w| matches!(w, [a, b] if a < b)) {
            sort_by(&mut keys, |a, b| a.cmp(b));
            keys.dedup_by(|later, earlier| later == earlier);
        }
        SortedSet { map: SortedMap { items: keys.into_iter().map(|k| (k, ())).collect() } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_map_orders_like_btree() {
        let mut m = SortedMap::new();
        for k in [5u64, 1, 9, 3, 1] {
            *m.get_or_insert_with(k, || 0u32) += 1;
        }
        assert_eq!(m.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), vec![(1, 2), (3, 1), (5, 1), (9, 1)]);
        assert_eq!(m.iter_after(&3).map(|(k, _)| *k).collect::<Vec<_>>(), vec![5, 9]);
        assert_eq!(m.iter_after(&4).map(|(k, _)| *k).collect::<Vec<_>>(), vec![5, 9]);
        assert_eq!(m.iter_after(&9).count(), 0);
        assert_eq!(m.remove(&5), Some(1));
        assert_eq!(m.insert(3, 7), Some(1));
        assert_eq!(m.get(&3), Some(&7));
        assert_eq!(m.len(), 3);
        let s: SortedSet<&str> = ["b", "a", "b"].into_iter().collect();
        assert!(s.contains("a") && !s.contains("c"));
        assert_eq!(s.into_vec(), vec!["a", "b"]);
    }

    #[test]
    fn sort_by_is_stable_like_std() {
        let data: Vec<(u8, u32)> = (0..200u32).map(|i| ((i * 7919 % 13) as u8, i)).collect();
        let mut ours = data.clone();
        sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
        let mut std = data;
        std.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(ours, std);
    }
}
