//! The client face's slabs: where the engines and calls live, by handle. A handle is refused as `freed` once its
//! slot was freed or reused (a generation in its high bits); nothing here panics.

use core::cell::RefCell;

use super::fail::Fail;
use crate::vocab::{ErrorField as Field, ErrorKind as FailKind};

/// A handle: the slot's index + 1 in the low 20 bits, its generation in the high 12 (a freed handle, or an
/// old handle whose slot was reused, is refused as `freed`).
const INDEX_BITS: u32 = 20;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

pub(super) struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

/// Live values by handle, with a free list.
pub(super) struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Slab<T> {
    pub(super) const fn new() -> Self {
        Slab { slots: Vec::new(), free: Vec::new() }
    }

    pub(super) fn insert(&mut self, value: T) -> Result<u32, Fail> {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                let i = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
                if i >= INDEX_MASK {
                    return Err(Fail::new(FailKind::TooMany, Field::None, f64::from(i)));
                }
                self.slots.push(Slot { generation: 0, value: None });
                i
            }
        };
        let slot = self.slots.get_mut(index as usize).ok_or(Fail::new(FailKind::TooMany, Field::None, 0.0))?;
        slot.generation = slot.generation.wrapping_add(1) & (u32::MAX >> INDEX_BITS);
        slot.value = Some(value);
        Ok((slot.generation << INDEX_BITS) | index.saturating_add(1))
    }

    // Not inlined: one copy per slab type rather than one in every export.
    #[inline(never)]
    pub(super) fn slot(&mut self, handle: f64) -> Option<(u32, &mut Slot<T>)> {
        if !(handle >= 1.0 && handle <= f64::from(u32::MAX) && handle.fract() == 0.0) {
            return None;
        }
        let h = handle as u32;
        let index = (h & INDEX_MASK).checked_sub(1)?;
        let slot = self.slots.get_mut(index as usize)?;
        (slot.value.is_some() && slot.generation == h >> INDEX_BITS).then_some((index, slot))
    }

    pub(super) fn get(&mut self, handle: f64, field: Field) -> Result<&mut T, Fail> {
        self.slot(handle).and_then(|(_, s)| s.value.as_mut()).ok_or(Fail::new(FailKind::Freed, field, handle))
    }

    pub(super) fn remove(&mut self, handle: f64, field: Field) -> Result<(), Fail> {
        let (index, slot) = self.slot(handle).ok_or(Fail::new(FailKind::Freed, field, handle))?;
        slot.value = None;
        self.free.push(index);
        Ok(())
    }
}

/// Runs `f` on a slab. No JS runs inside an export, so the borrow cannot be contended; `try_with` and
/// `try_borrow_mut` keep even that impossible case a failure, not a panic.
pub(super) fn with_slab<T: 'static, R>(
    slab: &'static std::thread::LocalKey<RefCell<Slab<T>>>,
    field: Field,
    f: impl FnOnce(&mut Slab<T>) -> Result<R, Fail>,
) -> Result<R, Fail> {
    let busy = Fail::new(FailKind::InvalidValue, field, 0.0);
    slab.try_with(|s| s.try_borrow_mut().map_err(|_| busy).and_then(|mut s| f(&mut s))).unwrap_or(Err(busy))
}
