//! The objects JS builds from out slots ([`Shape`]): for each, a reader `name(o, …given)` rendered into
//! `generated/seam.js` (`super::render`).

/// Where a key of a [`Shape`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// The slot of that JS name, read as the slot says.
    Slot(&'static str),
    /// A JS literal.
    Const(&'static str),
    /// An argument of the reader, of the key's name (what JS holds and never crosses, as a fingerprint).
    Given,
}

/// An object JS builds from out slots: a generated reader `name(o, …given)` returning `{ key: … }`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The reader's name.
    pub name: &'static str,
    /// What it reads.
    pub doc: &'static str,
    /// Its keys, in order.
    pub keys: &'static [(&'static str, Key)],
}

/// The client face's shapes.
pub const CLIENT_SHAPES: &[Shape] = &[
    Shape {
        name: "readRetry",
        doc: "A retry decision.",
        keys: &[
            ("action", Key::Const("'retry'")),
            ("delayMs", Key::Slot("delayMs")),
            ("recover", Key::Slot("recover")),
            ("reason", Key::Slot("reason")),
        ],
    },
    Shape {
        name: "readStop",
        doc: "A stop decision.",
        keys: &[("action", Key::Const("'stop'")), ("status", Key::Slot("stop")), ("reason", Key::Slot("reason"))],
    },
    Shape {
        name: "readClassification",
        doc: "A classification.",
        keys: &[
            ("verdict", Key::Slot("verdict")),
            ("delivery", Key::Slot("delivery")),
            ("recover", Key::Slot("causeRecover")),
            ("retryAfterMs", Key::Slot("retryAfterMs")),
            ("cause", Key::Slot("cause")),
        ],
    },
    Shape {
        name: "readAdmitted",
        doc: "An admitted attempt.",
        keys: &[
            ("admitted", Key::Const("true")),
            ("attempt", Key::Slot("attempt")),
            ("timeoutMs", Key::Slot("timeoutMs")),
            ("breaker", Key::Slot("breaker")),
        ],
    },
    Shape {
        name: "readHedgeCounts",
        doc: "Hedges sent and won, and the requests and hedges in flight.",
        keys: &[
            ("sent", Key::Slot("sent")),
            ("won", Key::Slot("won")),
            ("requestsInFlight", Key::Slot("requestsInFlight")),
            ("hedgesInFlight", Key::Slot("hedgesInFlight")),
        ],
    },
    Shape {
        name: "readTop",
        doc: "The policy's top-level values.",
        keys: &[
            ("maxAttempts", Key::Slot("maxAttempts")),
            ("baseDelayMs", Key::Slot("baseDelayMs")),
            ("maxDelayMs", Key::Slot("maxDelayMs")),
            ("jitter", Key::Slot("jitter")),
            ("attemptTimeoutMs", Key::Slot("attemptTimeoutMs")),
            ("totalTimeoutMs", Key::Slot("totalTimeoutMs")),
            ("maxRetryAfterMs", Key::Slot("maxRetryAfterMs")),
        ],
    },
    Shape {
        name: "readBudget",
        doc: "The policy's retry budget (when on).",
        keys: &[
            ("capacity", Key::Slot("capacity")),
            ("retryCost", Key::Slot("retryCost")),
            ("timeoutCost", Key::Slot("timeoutCost")),
            ("successRefill", Key::Slot("successRefill")),
            ("refillPerSecond", Key::Slot("refillPerSecond")),
        ],
    },
    Shape {
        name: "readBreaker",
        doc: "The policy's circuit breaker (when on).",
        keys: &[
            ("consecutiveFailures", Key::Slot("consecutiveFailures")),
            ("failureRatio", Key::Slot("failureRatio")),
            ("minimumCalls", Key::Slot("minimumCalls")),
            ("windowMs", Key::Slot("windowMs")),
            ("openMs", Key::Slot("openMs")),
        ],
    },
];

/// The server face's shapes.
pub const LEDGER_SHAPES: &[Shape] = &[
    Shape {
        name: "readMade",
        doc: "The record a rule made, with the fingerprint it was made for.",
        keys: &[
            ("state", Key::Slot("state")),
            ("fingerprint", Key::Given),
            ("leaseUntilMs", Key::Slot("leaseUntilMs")),
            ("createdMs", Key::Slot("createdMs")),
            ("expiresMs", Key::Slot("expiresMs")),
            ("version", Key::Slot("version")),
        ],
    },
    Shape {
        name: "readWriteAnswer",
        doc: "What a ledger write answers, and how it is counted.",
        keys: &[
            ("answer", Key::Slot("answer")),
            ("reply", Key::Slot("reply")),
            ("why", Key::Slot("why")),
            ("kind", Key::Slot("kind")),
        ],
    },
];
