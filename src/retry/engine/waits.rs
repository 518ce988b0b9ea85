//! The engine's answers that send nothing: an input round nobody answered, a look again at an operation still
//! running, and a failed `tools/list`.

use super::Engine;
use crate::retry::classify::Recover;
use crate::retry::decide::{decide_poll, decide_unanswered, CallOptions, CallState, Decision, FinalStatus, Reason};
use crate::retry::ends::decide_list_recovery;
use crate::retry::outcome::{AttemptOutcome, Revision};
use crate::retry::safety::Safety;

impl Engine {
    /// The caller could not answer the input request it was told to answer (a `continue_input` decision):
    /// ends the call ([`decide_unanswered`]). Nothing was sent: no attempt, no budget, no breaker.
    pub fn input_unanswered(&self, call: &mut CallState, handler_missing: bool) -> Decision {
        call.pending_recover = None;
        call.in_flight = false;
        decide_unanswered(call, handler_missing)
    }

    /// The operation `call` waits on is still running (a created task `working`, a write the status tool
    /// reports `in_progress`); `hint_ms` is the server's own interval, if it gave one. Decides when to look
    /// again ([`decide_poll`]: a `Retry` with the wait, or a `pending` stop) and counts the look. Touches
    /// neither the budget nor the breaker.
    pub fn poll(&self, call: &mut CallState, hint_ms: Option<u64>, now_ms: u64, random: u64) -> Decision {
        self.poll_within(call, hint_ms, now_ms, random, None)
    }

    /// [`Engine::poll`] where outgoing requests are counted: a look is one request, so with no `room` left the
    /// operation is left running and the call ends `pending` ([`Reason::SubrequestBudget`]). `None`: not counted.
    pub fn poll_within(
        &self,
        call: &mut CallState,
        hint_ms: Option<u64>,
        now_ms: u64,
        random: u64,
        room: Option<u32>,
    ) -> Decision {
        if room.is_some_and(|room| room < Recover::PollTask.subrequests()) {
            return Decision::stop(FinalStatus::Pending, Reason::SubrequestBudget);
        }
        let decision = decide_poll(&self.policy, call, hint_ms, now_ms, random);
        if decision.is_retry() {
            call.polls = call.polls.saturating_add(1);
        }
        decision
    }

    /// A `tools/list` (a read) failed with `outcome`: whether to recover and list again
    /// ([`decide_list_recovery`]: a `Retry` to re-initialize or renegotiate, else a stop and the list stays
    /// unknown). The read goes through the gate like an attempt (admitted, recorded as read-only), so the
    /// budget and the breaker see it; its call state is its own and ends here.
    pub fn list_failed(
        &mut self,
        outcome: &AttemptOutcome,
        revision: impl Into<Option<Revision>>,
        now_ms: u64,
        random: u64,
    ) -> Decision {
        let mut call = self.begin_with(now_ms, CallOptions { answers_input: false });
        match self.admit(&mut call, now_ms) {
            Err(stop) => stop,
            Ok(_) => decide_list_recovery(
                self.record(&mut call, outcome, Safety::ReadOnly, revision, now_ms, random).decision,
            ),
        }
    }
}
