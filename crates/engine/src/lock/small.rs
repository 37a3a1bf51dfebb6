//! A list that keeps its first few items inline, for the lock manager's per-lock lists and a
//! transaction's table locks.

/// A list whose first `N` items live inline and the rest in a vector. A lock table entry's
/// granted owners and an owner's held locks almost always fit inline, so that taking and
/// releasing a lock allocates nothing; a big transaction's thousands of key locks spill over.
///
/// Invariant: slots `0..min(len, N)` of `inline` are `Some`, the others `None`, and `spill`
/// holds items `N..len` (it is empty while an inline slot is free), so the items are in
/// order: inline, then spilled.
#[derive(Debug)]
pub(crate) struct SmallList<T, const N: usize> {
    len: usize,
    inline: [Option<T>; N],
    spill: Vec<T>,
}

impl<T, const N: usize> Default for SmallList<T, N> {
    fn default() -> Self {
        SmallList { len: 0, inline: [const { None }; N], spill: Vec::new() }
    }
}

impl<T, const N: usize> SmallList<T, N> {
    /// A list of one item.
    pub(crate) fn one(item: T) -> Self {
        let mut list = SmallList::default();
        list.push(item);
        list
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn push(&mut self, item: T) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = Some(item),
            None => self.spill.push(item),
        }
        self.len += 1;
    }

    /// The items in order.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &T> {
        // Only the live prefix of `inline`: a flatten over every slot costs each lookup of
        // these short lists more than the lookup itself.
        self.inline[..self.len.min(N)].iter().filter_map(Option::as_ref).chain(&self.spill)
    }

    pub(crate) fn get_mut(&mut self, at: usize) -> Option<&mut T> {
        if at >= N {
            self.spill.get_mut(at - N)
        } else {
            self.inline[at].as_mut()
        }
    }

    /// The index of the last item matching `pred`: searching from the end finds the lock
    /// taken last, which is the one a READ COMMITTED read gives back, at once.
    pub(crate) fn rposition(&self, mut pred: impl FnMut(&T) -> bool) -> Option<usize> {
        let in_spill = self.spill.iter().rposition(&mut pred).map(|at| N + at);
        in_spill.or_else(|| {
            self.inline[..self.len.min(N)]
                .iter()
                .rposition(|slot| slot.as_ref().is_some_and(&mut pred))
        })
    }

    /// Removes the item at `at`, keeping the others in order.
    pub(crate) fn remove(&mut self, at: usize) -> Option<T> {
        if at >= self.len {
            return None;
        }
        let live = self.len.min(N);
        self.len -= 1;
        if at >= N {
            return Some(self.spill.remove(at - N));
        }
        let item = self.inline[at].take();
        // Close the gap: shift the later live inline items down (the slots past them are
        // None already), then pull the first spilled one in. Removing the last item moves
        // nothing.
        self.inline[at..live].rotate_left(1);
        if !self.spill.is_empty() {
            self.inline[N - 1] = Some(self.spill.remove(0));
        }
        item
    }

    /// Removes the item at `at`, putting the last item in its place: for lists whose order
    /// does not matter.
    pub(crate) fn swap_remove(&mut self, at: usize) -> Option<T> {
        if at >= self.len {
            return None;
        }
        let last = self.len - 1;
        self.len = last;
        let last_item = if last >= N { self.spill.pop() } else { self.inline[last].take() };
        if at == last {
            return last_item;
        }
        match (self.get_mut(at), last_item) {
            (Some(slot), Some(item)) => Some(std::mem::replace(slot, item)),
            _ => None,
        }
    }

    /// Empties the list, keeping the spill vector's allocation.
    pub(crate) fn clear(&mut self) {
        self.inline.iter_mut().for_each(|slot| *slot = None);
        self.spill.clear();
        self.len = 0;
    }

    /// Takes the items out in order, leaving the list empty.
    pub(crate) fn take_all(&mut self) -> impl Iterator<Item = T> {
        let inline = std::mem::replace(&mut self.inline, [const { None }; N]);
        self.len = 0;
        inline.into_iter().flatten().chain(std::mem::take(&mut self.spill))
    }
}

#[cfg(test)]
mod tests {
    use super::SmallList;

    fn items(list: &SmallList<u32, 2>) -> Vec<u32> {
        list.iter().copied().collect()
    }

    #[test]
    fn keeps_order_inline_and_spilled() {
        let mut list = SmallList::<u32, 2>::default();
        assert!(list.is_empty());
        for n in 1..=5 {
            list.push(n);
        }
        assert_eq!(items(&list), [1, 2, 3, 4, 5]);
        assert_eq!(list.iter().rev().copied().collect::<Vec<_>>(), [5, 4, 3, 2, 1]);
        assert_eq!(list.rposition(|&n| n % 2 == 0), Some(3));
        assert_eq!(list.rposition(|&n| n == 1), Some(0));
        assert_eq!(list.rposition(|&n| n == 9), None);
        // Removing inline pulls the first spilled item in.
        assert_eq!(list.remove(0), Some(1));
        assert_eq!(items(&list), [2, 3, 4, 5]);
        assert_eq!(list.remove(3), Some(5));
        assert_eq!(list.remove(3), None);
        assert_eq!(items(&list), [2, 3, 4]);
        assert_eq!(list.swap_remove(0), Some(2));
        assert_eq!(items(&list), [4, 3]);
        assert_eq!(list.swap_remove(1), Some(3));
        assert_eq!(list.swap_remove(1), None);
        if let Some(n) = list.get_mut(0) {
            *n = 7;
        }
        assert_eq!(items(&list), [7]);
        assert_eq!(list.remove(0), Some(7));
        assert!(list.is_empty());
    }

    /// A list shorter than its inline room: a removal shifts only the live items, and the
    /// slots past them stay free for the next pushes.
    #[test]
    fn remove_from_a_partly_filled_inline_list() {
        let mut list = SmallList::<u32, 4>::default();
        for n in 1..=3 {
            list.push(n);
        }
        assert_eq!(list.remove(1), Some(2));
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [1, 3]);
        assert_eq!(list.remove(1), Some(3));
        assert_eq!(list.remove(1), None);
        for n in 4..=7 {
            list.push(n);
        }
        assert_eq!(list.len(), 5);
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [1, 4, 5, 6, 7]);
        assert_eq!(list.remove(3), Some(6));
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [1, 4, 5, 7]);
    }

    #[test]
    fn swap_remove_across_inline_and_spill() {
        let mut list = SmallList::<u32, 2>::default();
        for n in 1..=4 {
            list.push(n);
        }
        assert_eq!(list.swap_remove(1), Some(2));
        assert_eq!(items(&list), [1, 4, 3]);
        assert_eq!(list.swap_remove(2), Some(3));
        assert_eq!(items(&list), [1, 4]);
        list.push(5);
        let taken: Vec<u32> = list.take_all().collect();
        assert_eq!(taken, [1, 4, 5]);
        assert!(list.is_empty() && list.iter().next().is_none());
        list.push(6);
        list.push(8);
        list.push(9);
        list.clear();
        assert!(list.is_empty() && list.iter().next().is_none());
        assert_eq!(items(&SmallList::one(3)), [3]);
    }
}
