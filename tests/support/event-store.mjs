// An SSE event store for the test server's resumable streams. Not the SDK's example InMemoryEventStore:
// that one orders events by `${streamId}_${Date.now()}_${random}` as strings, so two events stored in the
// same millisecond replay in random order and the response after a priming event is lost about half the
// time. Ids here carry a counter, so the order is the order of storage.
export class OrderedEventStore {
  #events = [];
  #n = 0;

  async storeEvent(streamId, message) {
    const eventId = `${streamId}::${String(++this.#n).padStart(12, '0')}`;
    this.#events.push({ eventId, streamId, message });
    return eventId;
  }

  async getStreamIdForEventId(eventId) {
    return this.#events.find((e) => e.eventId === eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId, { send }) {
    const at = this.#events.findIndex((e) => e.eventId === lastEventId);
    if (at < 0) return '';
    const { streamId } = this.#events[at];
    for (const e of this.#events.slice(at + 1)) {
      if (e.streamId === streamId) await send(e.eventId, e.message);
    }
    return streamId;
  }
}
