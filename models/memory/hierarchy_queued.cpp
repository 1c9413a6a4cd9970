// The hierarchy with the DRAM's scheduler in the loop: an incremental event engine (queued_issue,
// queued_step, see the declarations) and MemoryHierarchy::run_queued, a traffic driver on top of
// it. Events: crossbar transfers starting at the head of their requester's queue, L2 lookups at
// slice arrival, bursts entering controller queues, controller decisions. Ties are broken in that
// order, then by sequence number (decisions: by controller), so runs are deterministic; drivers
// issue before any event of the same time.
//
// A burst entering its controller's queue changes that controller's state and nothing else, and
// only that controller's next decision reads it. So arrivals wait per controller and are applied,
// in (time, sequence) order, when the controller next acts: at its decision, or at the first
// arrival when its queue is empty (then no decision is pending). This is the order a global queue
// of arrivals would give (arrivals precede decisions of the same time), without a global heap of
// every burst in flight (a thousand entries when the SMs stream).
#include <algorithm>
#include <array>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "models/memory/memory_hierarchy.h"
#include "models/memory/ring_queue.h"

namespace accelsim::memory {

namespace {
// A request's slot holds what its pieces share; a request of one piece (most: sectors never cross
// a line) gets a slot only if its lookup has to wait for a fill. Until then it travels in its
// lookup, so the thousands of lookups queued behind the crossbar cost no scattered slot accesses.
constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
struct Lookup {
    Picoseconds at;
    std::uint64_t seq;
    std::uint64_t address;
    std::uint64_t tag;
    Picoseconds issued;
    std::uint32_t bytes, slot;  // slot: kNoSlot for a one-piece request
    bool write;
};
struct Transfer {  // a line piece waiting at its requester's crossbar input
    Picoseconds issued;
    std::uint64_t address;
    std::uint64_t tag;
    std::uint32_t bytes, slot;
    int slice;
    bool write;
};

__extension__ using Key128 = unsigned __int128;  // (time, sequence) keys compared without a branch
struct RequesterHead {  // when a requester's first waiting transfer tries to start again
    Picoseconds at;
    std::uint64_t seq;
    int requester;
    Key128 key() const { return static_cast<Key128>(at) << 64 | seq; }
    bool operator>(const RequesterHead& o) const { return key() > o.key(); }
};
struct SliceHead {  // the earliest lookup waiting at a slice
    Picoseconds at;
    std::uint64_t seq;
    int slice;
    Key128 key() const { return static_cast<Key128>(at) << 64 | seq; }
    bool operator>(const SliceHead& o) const { return key() > o.key(); }
};
struct ControllerEvent {  // when a controller acts next; ordered as the pair (at, unit)
    Picoseconds at;
    int unit;
    Key128 key() const { return static_cast<Key128>(at) << 64 | static_cast<std::uint32_t>(unit); }
    bool operator>(const ControllerEvent& o) const { return key() > o.key(); }
};
struct Arrival {  // a burst on its way to a controller queue
    Picoseconds at;
    std::uint64_t seq;
    DramController::Burst burst;
    Key128 key() const { return static_cast<Key128>(at) << 64 | seq; }
    bool operator>(const Arrival& o) const { return key() > o.key(); }
};
static_assert(sizeof(Arrival) == 64, "an arrival record is one host cache line");
constexpr Picoseconds kNever = DramController::kNeverPs;

// A 4-ary min-heap (by operator>, as std::priority_queue with std::greater) that can also
// replace its top in one sift-down: most events take the top and put their unit's next one
// back, which a pop and a push do with two passes. Four children per node halve the depth (a
// hundred requesters: 4 levels, not 7). Keys are unique ((time, sequence)) or equal only when
// the entries are identical, so the order of tops is the priority_queue's.
template <typename T>
class MinHeap {
public:
    bool empty() const { return heap_.empty(); }
    const T& top() const { return heap_.front(); }
    void push(const T& v) {
        heap_.push_back(v);
        std::size_t i = heap_.size() - 1;
        while (i > 0) {
            const std::size_t parent = (i - 1) / 4;
            if (!(heap_[parent] > v)) break;
            heap_[i] = heap_[parent];
            i = parent;
        }
        heap_[i] = v;
    }
    template <typename... Args>
    void emplace(Args&&... args) { push(T{std::forward<Args>(args)...}); }
    void pop() {
        const T last = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) sift_down(last);
    }
    void replace_top(const T& v) { sift_down(v); }

private:
    void sift_down(const T& v) {
        const std::size_t n = heap_.size();
        std::size_t i = 0;
        for (;;) {
            const std::size_t first = 4 * i + 1;
            if (first >= n) break;
            std::size_t child = first;
            if (first + 4 <= n) {
                // A full node: the smallest of four as a tournament of selects (the loop's
                // branches follow the keys and mispredict).
                const std::size_t a = heap_[first] > heap_[first + 1] ? first + 1 : first;
                const std::size_t b = heap_[first + 2] > heap_[first + 3] ? first + 3 : first + 2;
                child = heap_[a] > heap_[b] ? b : a;
            } else {
                for (std::size_t c = first + 1; c < n; ++c)
                    if (heap_[child] > heap_[c]) child = c;
            }
            if (!(v > heap_[child])) break;
            heap_[i] = heap_[child];
            i = child;
        }
        heap_[i] = v;
    }
    std::vector<T> heap_;
};
// The driver's completion times, a multiset of which it reads only the minimum: most requests
// complete in time order, so a time no earlier than the last one queued goes on a FIFO (sorted by
// construction) and only the others into a heap; the minimum is the smaller of the two fronts.
// Equal times are interchangeable (only values are read), so this pops what one heap would.
class CompletionTimes {
public:
    bool empty() const { return in_order_.empty() && out_of_order_.empty(); }
    Picoseconds top() const {
        if (in_order_.empty()) return out_of_order_.top();
        if (out_of_order_.empty()) return in_order_.front();
        return std::min(in_order_.front(), out_of_order_.top());
    }
    void push(Picoseconds t) {
        if (in_order_.empty() || t >= in_order_.back()) in_order_.push_back(t);
        else out_of_order_.push(t);
    }
    void pop() {
        if (!in_order_.empty() && (out_of_order_.empty() || in_order_.front() <= out_of_order_.top())) in_order_.pop_front();
        else out_of_order_.pop();
    }

private:
    RingQueue<Picoseconds> in_order_;
    MinHeap<Picoseconds> out_of_order_;
};
}  // namespace

struct MemoryHierarchy::QueuedState {
    struct Slot {  // one request in flight
        Picoseconds issued = 0, done = 0;
        std::uint64_t tag = 0;
        std::uint32_t bytes = 0;
        int pieces = 0;  // line pieces not yet looked up
        int waits = 0;   // fills still awaited
        bool write = false;
    };
    struct DramRequest {  // one fill piece or write-back, as Dram::access would have seen it
        std::uint64_t address = 0;
        Picoseconds issued = 0, done = 0;
        std::int64_t fill = -1;
        std::uint32_t bytes = 0;
        int bursts = 0;
        bool write = false;
    };
    std::vector<Slot> slots;
    std::vector<std::uint32_t> free_slots;
    std::uint32_t new_slot() {
        if (free_slots.empty()) {
            slots.emplace_back();
            return static_cast<std::uint32_t>(slots.size() - 1);
        }
        const std::uint32_t s = free_slots.back();
        free_slots.pop_back();
        return s;
    }
    std::uint64_t in_flight = 0;
    // Crossbar transfers that could not start when issued (input port busy, or the target's output
    // buffer full), per requester in issue order, and a heap of each queue's retry time. Ports
    // are booked only when a transfer starts, in time order (Crossbar::try_start).
    std::vector<RingQueue<Transfer>> requester_transfers;
    MinHeap<RequesterHead> transfer_heads;
    // Lookups per slice, in time order: a crossbar output port delivers its transfers in call
    // order, each strictly after the one before, so a FIFO per slice plus a heap of the FIFOs'
    // heads gives the (time, seq) order of one heap over all lookups with a heap of at most one
    // entry per slice (tens of thousands of lookups can be waiting when the SMs stream).
    std::vector<RingQueue<Lookup>> slice_lookups;
    MinHeap<SliceHead> lookup_heads;
    // A transfer's last byte reached its slice at `at`: its lookup joins the slice's FIFO. True
    // when it is the FIFO's head (the next lookup of its slice).
    bool arrive(const Transfer& piece, Picoseconds at) {
        auto& fifo = slice_lookups[static_cast<std::size_t>(piece.slice)];
        const bool head = fifo.empty();
        if (head) {
            lookup_heads.push(SliceHead{at, seq, piece.slice});
            next_event = std::min(next_event, at);
        }
        else if (fifo.back().at > at) throw std::logic_error("memory hierarchy: crossbar delivered out of order");
        fifo.push_back(Lookup{at, seq++, piece.address, piece.tag, piece.issued, piece.bytes, piece.slot, piece.write});
        return head;
    }
    // Per controller: bursts on their way (not yet applied), bursts in front of its full queue.
    std::vector<MinHeap<Arrival>> arrivals;
    std::vector<std::array<RingQueue<DramController::Burst>, DramController::kWaitingLines>> waiting;  // per kind
    // When each controller acts next (controller_event_time), as (time, controller); entries
    // that no longer match it are stale and skipped.
    MinHeap<ControllerEvent> controller_events;
    std::vector<DramRequest> dram_requests;
    std::vector<std::uint32_t> free_dram_requests;
    // By fill id: one host cache line, so that a landing fill costs one host cache miss. Most
    // fills have one DRAM request (a "direct" fill: its bursts carry kDirect | fill id and its
    // request lives here) and one waiter, the sector that missed, which waits for nothing else
    // or for one older fill of its line besides (an "inline" waiter: it lives here instead of in a
    // slot; the older fill lists it as kInlineRef | this fill's id).
    struct alignas(64) Fill {
        Picoseconds done = kNever;  // landing: the latest of its requests' (direct: while in flight too)
        Picoseconds dram_issued = 0;              // direct: when its request left the slice
        Picoseconds waiter_issued = 0, waiter_done = 0;  // the inline waiter
        std::uint64_t waiter_tag = 0;
        std::uint32_t first_waiter = 0;  // waiting slots: the first one here, the rest in
        std::uint32_t waiter_count = 0;  // more_waiters[fill id]
        std::uint32_t waiter_other = 0;  // the other fill the inline waiter waits for, if any
        std::uint16_t waiter_bytes = 0;
        std::uint16_t dram_bytes = 0;    // direct
        std::uint16_t bursts = 0;        // direct: bursts not yet served
        std::uint16_t slice = 0;
        std::uint8_t requests_left = 0;
        std::uint8_t waiter_waits = 0;   // fills the inline waiter still waits for
        bool inline_waiter = false, waiter_write = false;
    };
    static_assert(sizeof(Fill) == 64, "a fill record is one host cache line");
    static constexpr std::uint32_t kDirect = std::uint32_t{1} << 31;     // burst tag of a direct fill
    static constexpr std::uint32_t kInlineRef = std::uint32_t{1} << 31;  // waiter: a fill's inline one
    std::vector<Fill> fills;
    std::vector<std::vector<std::uint32_t>> more_waiters;  // by fill id, rarely used
    // A fill blocked for want of an MSHR keeps its DRAM requests here, per slice in the L2's own
    // release order (FIFO per slice); their records are made only when released, so a blocked
    // fill (tens of thousands when the SMs stream) costs no scattered record to revisit.
    struct HeldRequest {
        std::uint64_t address;
        std::int64_t fill;
        std::uint32_t bytes;
        bool direct;
    };
    std::vector<RingQueue<HeldRequest>> held;
    std::vector<L2Cache::NextLevelRequest> requests;
    std::vector<std::pair<std::int64_t, Picoseconds>> released;
    std::vector<QueuedCompletion> completions;
    // A controller acts at its next decision; with an empty queue, when its first burst arrives.
    static Picoseconds controller_event_time(const DramController& c, const MinHeap<Arrival>& on_the_way) {
        if (!c.empty()) return c.next_decision_time();
        return on_the_way.empty() ? kNever : on_the_way.top().at;
    }
    Picoseconds controller_latency = 0, hit = 0;
    // queued_next_event()'s answer, valid until the next step: a driver asks for it and then
    // steps, and the step need not find it again. An issue only adds heap entries, so it keeps
    // the answer valid by lowering it to each entry it pushes (arrive, transfer_heads).
    Picoseconds next_event = 0;
    bool next_event_known = false;
    FastDivider burst_div;
    std::uint64_t seq = 0;
};

void MemoryHierarchy::QueuedStateDeleter::operator()(QueuedState* state) const { delete state; }

MemoryHierarchy::QueuedState& MemoryHierarchy::queued() {
    if (!queued_) {
        if (!l2_) throw std::logic_error("MemoryHierarchy: the queued mode needs an L2");
        queued_.reset(new QueuedState());
        QueuedState& q = *queued_;
        q.waiting.resize(dram_.controllers().size());
        q.arrivals.resize(dram_.controllers().size());
        q.slice_lookups.resize(static_cast<std::size_t>(l2_->params().slices));
        q.requester_transfers.resize(static_cast<std::size_t>(params_.requesters));
        q.held.resize(static_cast<std::size_t>(l2_->params().slices));
        if (l2_->params().slices > 0xFFFF) throw std::invalid_argument("memory hierarchy: the queued mode takes at most 65535 L2 slices");
        q.controller_latency = ns_to_ps(dram_.params().controller_latency_ns);
        q.burst_div = FastDivider(static_cast<std::uint64_t>(dram_.params().burst_bytes()));
        q.hit = l2_->hit_latency_ps();
    }
    return *queued_;
}

void MemoryHierarchy::queued_issue(int requester, std::uint64_t address, std::uint32_t bytes, bool write,
                                   Picoseconds now, std::uint64_t tag) {
    QueuedState& q = queued();
    if (requester < 0 || requester >= params_.requesters)
        throw std::invalid_argument("memory hierarchy: requester out of range");
    bytes = std::max<std::uint32_t>(bytes, 1);
    ++q.in_flight;
    const std::uint64_t line = line_div_.divisor();
    const std::uint64_t end = address + bytes;
    std::uint32_t s = kNoSlot;
    if (line_div_.div(address) != line_div_.div(end - 1)) {
        s = q.new_slot();
        q.slots[s] = QueuedState::Slot{now, now, tag, bytes, 0, 0, write};
    }
    // Through the crossbar to its slices, one transfer (then one lookup) per line piece.
    auto& waiting = q.requester_transfers[static_cast<std::size_t>(requester)];
    std::uint64_t a = address;
    while (a < end) {
        const std::uint64_t piece_end = std::min(end, (line_div_.div(a) + 1) * line);
        const auto n = static_cast<std::uint32_t>(piece_end - a);
        const Transfer piece{now, a, tag, n, s, l2_->slice_of(a), write};
        if (s != kNoSlot) ++q.slots[s].pieces;
        a = piece_end;
        if (waiting.empty()) {  // at the head of its queue: try now
            const Crossbar::Start start = crossbar_.try_start(requester, piece.slice, n, now, now);
            if (start.started) {
                // A slice's next lookup: its L2 set's host lines load until the lookup's turn.
                if (q.arrive(piece, start.time)) l2_->prefetch(piece.address, piece.slice);
                continue;
            }
            q.transfer_heads.push(RequesterHead{start.time, q.seq++, requester});
            q.next_event = std::min(q.next_event, start.time);
        }
        waiting.push_back(piece);
    }
}

Picoseconds MemoryHierarchy::queued_next_event() {
    if (!queued_) return kNever;
    QueuedState& q = *queued_;
    if (q.next_event_known) return q.next_event;
    auto& ctrls = dram_.controllers();
    while (!q.controller_events.empty()) {
        const auto [at, unit] = q.controller_events.top();
        const auto u = static_cast<std::size_t>(unit);
        if (at == QueuedState::controller_event_time(ctrls[u], q.arrivals[u])) break;
        q.controller_events.pop();  // stale: the controller's next action moved
    }
    const Picoseconds transfer_time = q.transfer_heads.empty() ? kNever : q.transfer_heads.top().at;
    const Picoseconds lookup_time = q.lookup_heads.empty() ? kNever : q.lookup_heads.top().at;
    const Picoseconds controller_time = q.controller_events.empty() ? kNever : q.controller_events.top().at;
    q.next_event = std::min({transfer_time, lookup_time, controller_time});
    q.next_event_known = true;
    return q.next_event;
}

bool MemoryHierarchy::queued_idle() const { return !queued_ || queued_->in_flight == 0; }

std::vector<QueuedCompletion>& MemoryHierarchy::queued_completions() { return queued().completions; }

void MemoryHierarchy::queued_step() {
    const Picoseconds now = queued_next_event();
    if (now == kNever) return;
    QueuedState& q = *queued_;
    q.next_event_known = false;  // this step changes the heaps
    auto& ctrls = dram_.controllers();

    auto request_finished = [&](std::uint64_t tag, Picoseconds issued, Picoseconds done, std::uint32_t bytes, bool write) {
        q.completions.push_back({tag, issued, done});
        ++requests_;
        (write ? bytes_written_ : bytes_read_) += bytes;
        latency_.record(done - issued);
        --q.in_flight;
    };
    auto slot_finished = [&](std::uint32_t s) {
        const QueuedState::Slot& sl = q.slots[s];
        request_finished(sl.tag, sl.issued, sl.done, sl.bytes, sl.write);
        q.free_slots.push_back(s);
    };
    // A burst leaves for its controller; an idle controller acts when its first burst arrives.
    auto on_the_way = [&](const DramController::Burst& burst) {
        const auto u = static_cast<std::size_t>(burst.where.unit);
        auto& pending = q.arrivals[u];
        const bool earliest = ctrls[u].empty() && (pending.empty() || burst.arrival < pending.top().at);
        pending.push(Arrival{burst.arrival, q.seq++, burst});
        if (earliest) q.controller_events.emplace(burst.arrival, burst.where.unit);
    };
    // Sends a DRAM request's bursts toward their controllers; they arrive after the front end.
    auto send = [&](std::uint32_t r, Picoseconds at) {
        QueuedState::DramRequest& d = q.dram_requests[r];
        d.issued = at;
        d.done = at + q.controller_latency;
        const std::uint64_t last = q.burst_div.div(d.address + std::max<std::uint32_t>(d.bytes, 1) - 1);
        for (std::uint64_t b = q.burst_div.div(d.address); b <= last; ++b) {
            DramController::Burst burst{dram_.mapper().map(b * q.burst_div.divisor()), d.write,
                                        at + q.controller_latency, r};
            ++d.bursts;
            on_the_way(burst);
        }
    };
    // The same for a direct fill's one request.
    auto send_direct = [&](std::int64_t fill, std::uint64_t address, std::uint32_t bytes, Picoseconds at) {
        QueuedState::Fill& f = q.fills[static_cast<std::size_t>(fill)];
        f.dram_issued = at;
        f.done = at + q.controller_latency;
        f.dram_bytes = static_cast<std::uint16_t>(bytes);
        const std::uint64_t last = q.burst_div.div(address + std::max<std::uint32_t>(bytes, 1) - 1);
        std::uint16_t bursts = 0;
        for (std::uint64_t b = q.burst_div.div(address); b <= last; ++b) {
            DramController::Burst burst{dram_.mapper().map(b * q.burst_div.divisor()), false,
                                        at + q.controller_latency, QueuedState::kDirect | static_cast<std::uint32_t>(fill)};
            ++bursts;
            on_the_way(burst);
        }
        f.bursts = bursts;
    };
    auto new_dram_request = [&](const L2Cache::NextLevelRequest& n, bool write) {
        std::uint32_t r;
        if (q.free_dram_requests.empty()) {
            r = static_cast<std::uint32_t>(q.dram_requests.size());
            q.dram_requests.emplace_back();
        } else {
            r = q.free_dram_requests.back();
            q.free_dram_requests.pop_back();
        }
        q.dram_requests[r] = QueuedState::DramRequest{n.address, 0, 0, n.fill, n.bytes, 0, write};
        return r;
    };

    if (!q.transfer_heads.empty() && q.transfer_heads.top().at == now) {  // a requester's queue tries again
        // Its heap entry stays on top until the queue's next retry time replaces it (or the
        // queue empties): nothing else touches transfer_heads meanwhile.
        const int requester = q.transfer_heads.top().requester;
        auto& waiting = q.requester_transfers[static_cast<std::size_t>(requester)];
        while (!waiting.empty()) {  // starts what it can now, in order
            const Transfer& head = waiting.front();
            const Crossbar::Start start = crossbar_.try_start(requester, head.slice, head.bytes, head.issued, now);
            if (!start.started) {
                q.transfer_heads.replace_top(RequesterHead{start.time, q.seq++, requester});
                // The transfer after this head is read at that retry, long after it was queued.
                if (waiting.size() > 1) {
                    const auto* next = reinterpret_cast<const char*>(&waiting[1]);
                    __builtin_prefetch(next);
                    __builtin_prefetch(next + sizeof(Transfer) - 1);
                }
                return;
            }
            if (q.arrive(head, start.time)) l2_->prefetch(head.address, head.slice);
            waiting.pop_front();
        }
        q.transfer_heads.pop();
        return;
    }

    if (!q.lookup_heads.empty() && q.lookup_heads.top().at == now) {  // one L2 lookup at its slice
        const int slice = q.lookup_heads.top().slice;
        auto& fifo = q.slice_lookups[static_cast<std::size_t>(slice)];
        const Lookup lk = fifo.front();
        fifo.pop_front();
        if (!fifo.empty()) {
            q.lookup_heads.replace_top(SliceHead{fifo.front().at, fifo.front().seq, slice});
            l2_->prefetch(fifo.front().address, slice);  // the slice's next lookup (see arrive)
        } else {
            q.lookup_heads.pop();
        }
        // This slice's FIFO is read again only after the other slices' heads: start loading the
        // entry after the new head now (the FIFOs outgrow the host caches when the SMs stream).
        if (fifo.size() > 1) {
            const auto* next = reinterpret_cast<const char*>(&fifo[1]);
            __builtin_prefetch(next);
            __builtin_prefetch(next + sizeof(Lookup) - 1);
        }
        q.requests.clear();
        const L2Cache::DeferredOutcome o =
            l2_->access_deferred(lk.address, lk.bytes, lk.write, lk.at, slice, q.requests);
        const int wait_count = (o.waits[0] >= 0 ? 1 : 0) + (o.waits[1] >= 0 ? 1 : 0);
        if (lk.slot == kNoSlot && wait_count == 0)
            request_finished(lk.tag, lk.issued, std::max(lk.issued, o.floor), lk.bytes, lk.write);
        if (o.new_fill >= 0) {  // fill ids are reused once resolved: reset its state
            const auto f = static_cast<std::size_t>(o.new_fill);
            if (f >= QueuedState::kDirect) throw std::logic_error("memory hierarchy: too many L2 fills in flight");
            if (f >= q.fills.size()) {
                q.fills.resize(f + 1);
                q.more_waiters.resize(f + 1);
            }
            QueuedState::Fill& fill = q.fills[f];
            fill.done = kNever;
            fill.first_waiter = 0;
            fill.waiter_count = 0;
            fill.slice = static_cast<std::uint16_t>(slice);
            fill.requests_left = 0;
            fill.inline_waiter = false;
        }
        // A fill of one request whose bursts fit the record's counter goes direct.
        std::size_t fill_requests = 0;
        for (const auto& n : q.requests) fill_requests += n.fill >= 0 ? 1 : 0;
        bool direct = false;
        if (fill_requests == 1)
            for (const auto& n : q.requests)
                if (n.fill >= 0)
                    direct = n.bytes <= 0xFFFF && q.burst_div.div(n.address + std::max<std::uint32_t>(n.bytes, 1) - 1) -
                                                          q.burst_div.div(n.address) < 0xFFFF;
        for (const auto& n : q.requests) {
            if (n.fill < 0) {
                send(new_dram_request(n, true), o.floor - q.hit);  // write-back: posted at the lookup's start
            } else {
                ++q.fills[static_cast<std::size_t>(n.fill)].requests_left;
                if (o.new_fill_blocked) q.held[static_cast<std::size_t>(slice)].push_back({n.address, n.fill, n.bytes, direct});
                else if (direct) send_direct(n.fill, n.address, n.bytes, o.new_fill_issue);
                else send(new_dram_request(n, false), o.new_fill_issue);
            }
        }
        std::uint32_t slot = lk.slot;
        if (slot == kNoSlot) {
            if (wait_count == 0) return;
            // A one-piece request, the first waiter of the first fill it waits for: inline there
            // (its place in the other fill's list, if any, is a reference to it).
            const std::int64_t w = o.waits[0] >= 0 ? o.waits[0] : o.waits[1];
            QueuedState::Fill& waited = q.fills[static_cast<std::size_t>(w)];
            if (lk.bytes <= 0xFFFF && waited.waiter_count == 0 && !waited.inline_waiter && o.waits[0] != o.waits[1]) {
                waited.inline_waiter = true;
                waited.waiter_tag = lk.tag;
                waited.waiter_issued = lk.issued;
                waited.waiter_done = std::max(lk.issued, o.floor);
                waited.waiter_bytes = static_cast<std::uint16_t>(lk.bytes);
                waited.waiter_write = lk.write;
                waited.waiter_waits = static_cast<std::uint8_t>(wait_count);
                if (wait_count == 2) {
                    const auto x = static_cast<std::size_t>(o.waits[1]);
                    waited.waiter_other = static_cast<std::uint32_t>(x);
                    QueuedState::Fill& other = q.fills[x];
                    const std::uint32_t ref = QueuedState::kInlineRef | static_cast<std::uint32_t>(w);
                    if (other.waiter_count++ == 0) other.first_waiter = ref;
                    else q.more_waiters[x].push_back(ref);
                }
                return;
            }
            slot = q.new_slot();
            if (slot >= QueuedState::kInlineRef) throw std::logic_error("memory hierarchy: too many requests in flight");
            q.slots[slot] = QueuedState::Slot{lk.issued, lk.issued, lk.tag, lk.bytes, 1, 0, lk.write};
        }
        QueuedState::Slot& sl = q.slots[slot];
        sl.done = std::max(sl.done, o.floor);
        --sl.pieces;
        for (const std::int64_t w : o.waits) {
            // The L2 names only fills still in flight (a landed fill has updated its line).
            if (w < 0) continue;
            QueuedState::Fill& waited = q.fills[static_cast<std::size_t>(w)];
            if (waited.waiter_count++ == 0) waited.first_waiter = slot;
            else q.more_waiters[static_cast<std::size_t>(w)].push_back(slot);
            ++sl.waits;
        }
        if (sl.pieces == 0 && sl.waits == 0) slot_finished(slot);
        return;
    }

    // A controller acts: the bursts that have reached it by now join its queue (or wait in front
    // of it when full), then it decides if its next decision is now.
    // Its heap entry stays on top until replaced by its next action's time (or popped): nothing
    // below pushes controller events before that.
    const int unit = q.controller_events.top().unit;
    auto& c = ctrls[static_cast<std::size_t>(unit)];
    auto& pending = q.arrivals[static_cast<std::size_t>(unit)];
    while (!pending.empty() && pending.top().at <= now) {
        const DramController::Burst& burst = pending.top().burst;
        auto& line = q.waiting[static_cast<std::size_t>(unit)][static_cast<std::size_t>(c.waiting_line(burst.write))];
        if (c.has_space(burst.write) && line.empty()) c.enqueue(burst);
        else line.push_back(burst);
        pending.pop();
    }
    if (c.next_decision_time() != now) {  // its queue was empty: the first decision comes later
        q.controller_events.replace_top({QueuedState::controller_event_time(c, pending), unit});
        return;
    }
    const DramController::Issued done = c.decide();
    auto& line = q.waiting[static_cast<std::size_t>(unit)][static_cast<std::size_t>(c.waiting_line(done.write))];
    if (!line.empty()) {
        DramController::Burst next = line.front();
        line.pop_front();
        next.arrival = std::max(next.arrival, now);
        c.enqueue(next);
        // This controller acts again only after the others: start loading what it will read then
        // (the lines in front of full queues outgrow the host caches when the SMs stream).
        if (!line.empty()) {
            const auto* first = reinterpret_cast<const char*>(&line.front());
            __builtin_prefetch(first);
            __builtin_prefetch(first + sizeof(DramController::Burst) - 1);
        }
    }
    if (const Picoseconds next = QueuedState::controller_event_time(c, pending); next != kNever)
        q.controller_events.replace_top({next, unit});
    else
        q.controller_events.pop();
    if (!c.empty()) {  // the oldest burst is the likeliest next pick: its request's record
        const std::uint32_t tag = c.oldest_tag();
        if (tag & QueuedState::kDirect) {
            const std::uint32_t fill = tag & ~QueuedState::kDirect;
            __builtin_prefetch(&q.fills[fill]);
            l2_->prefetch_fill(fill);  // and the L2's record of it, read when it lands
        } else {
            __builtin_prefetch(&q.dram_requests[tag]);
        }
    }
    std::int64_t fill;
    if (done.tag & QueuedState::kDirect) {
        fill = static_cast<std::int64_t>(done.tag & ~QueuedState::kDirect);
        QueuedState::Fill& f = q.fills[static_cast<std::size_t>(fill)];
        f.done = std::max(f.done, done.data_end);  // its one request's completion, as d.done below
        if (--f.bursts > 0) return;
        dram_.record_request(false, f.dram_bytes, f.done - f.dram_issued);
    } else {
        QueuedState::DramRequest& d = q.dram_requests[done.tag];
        d.done = std::max(d.done, done.data_end);
        if (--d.bursts > 0) return;
        dram_.record_request(d.write, d.bytes, d.done - d.issued);
        fill = d.fill;
        const Picoseconds d_done = d.done;
        q.free_dram_requests.push_back(done.tag);
        if (fill < 0) return;
        QueuedState::Fill& f = q.fills[static_cast<std::size_t>(fill)];
        f.done = f.done == kNever ? d_done : std::max(f.done, d_done);
    }
    const auto f = static_cast<std::size_t>(fill);
    QueuedState::Fill& landed = q.fills[f];
    if (--landed.requests_left > 0) return;
    // The fill has landed: its waiters, its line and its MSHR (which may release held fills).
    // An inline waiter, as wake() below does for a slot.
    auto wake_inline = [&](QueuedState::Fill& host) {
        host.waiter_done = std::max(host.waiter_done, landed.done + q.hit);
        if (--host.waiter_waits > 0) return false;
        host.inline_waiter = false;
        request_finished(host.waiter_tag, host.waiter_issued, host.waiter_done, host.waiter_bytes, host.waiter_write);
        return true;
    };
    auto wake = [&](std::uint32_t s) {
        if (s & QueuedState::kInlineRef) {
            wake_inline(q.fills[s & ~QueuedState::kInlineRef]);
            return;
        }
        QueuedState::Slot& sl = q.slots[s];
        sl.done = std::max(sl.done, landed.done + q.hit);
        if (--sl.waits == 0 && sl.pieces == 0) slot_finished(s);
    };
    if (landed.inline_waiter && !wake_inline(landed)) {
        // It still waits for the other fill, and this fill's id may be reused once resolved:
        // it moves to a slot, which takes its reference's place in the other fill's list.
        const std::uint32_t s = q.new_slot();
        if (s >= QueuedState::kInlineRef) throw std::logic_error("memory hierarchy: too many requests in flight");
        q.slots[s] = QueuedState::Slot{landed.waiter_issued, landed.waiter_done, landed.waiter_tag,
                                       landed.waiter_bytes, 0, landed.waiter_waits, landed.waiter_write};
        landed.inline_waiter = false;
        const std::uint32_t ref = QueuedState::kInlineRef | static_cast<std::uint32_t>(f);
        QueuedState::Fill& other = q.fills[landed.waiter_other];
        if (other.waiter_count > 0 && other.first_waiter == ref) {
            other.first_waiter = s;
        } else {
            auto& more = q.more_waiters[landed.waiter_other];
            const auto it = std::find(more.begin(), more.end(), ref);
            if (it == more.end()) throw std::logic_error("memory hierarchy: lost a waiter");
            *it = s;
        }
    }
    if (landed.waiter_count > 1) {
        auto& more = q.more_waiters[f];
        wake(landed.first_waiter);
        for (const std::uint32_t s : more) wake(s);
        more.clear();
    } else if (landed.waiter_count == 1) {
        wake(landed.first_waiter);
    }
    landed.waiter_count = 0;
    const auto slice = static_cast<std::size_t>(landed.slice);
    q.released.clear();
    l2_->resolve_fill(fill, landed.done, q.released);
    auto& held = q.held[slice];
    for (const auto& [released, issue] : q.released) {
        if (held.empty() || held.front().fill != released)
            throw std::logic_error("memory hierarchy: L2 released a fill out of its slice's order");
        while (!held.empty() && held.front().fill == released) {
            const QueuedState::HeldRequest h = held.front();
            held.pop_front();
            if (h.direct) send_direct(h.fill, h.address, h.bytes, issue);
            else send(new_dram_request(L2Cache::NextLevelRequest{h.address, h.bytes, h.fill}, false), issue);
        }
    }
    // The slice's next held fill is released at one of its later landings, long after it was
    // held: start loading its record (the held ring's next entry shares a host line with the last).
    if (!held.empty()) __builtin_prefetch(&q.fills[static_cast<std::size_t>(held.front().fill)]);
}

DriveResult MemoryHierarchy::run_queued(TrafficGenerator& traffic, const DriverParams& driver) {
    if (!l2_) throw std::logic_error("MemoryHierarchy::run_queued needs an L2");
    // The driver: at most max_outstanding requests in flight; a request's place frees when the
    // driver's clock reaches its completion.
    const int window = std::max(1, driver.max_outstanding);
    int free_places = window;
    CompletionTimes finished;
    std::vector<QueuedCompletion>& completions = queued_completions();
    DriveResult result;
    MemoryRequest req;
    bool have_request = traffic.next(req);
    Picoseconds t_driver = 0;
    bool first = true;
    std::uint64_t issued_requests = 0;

    for (;;) {
        Picoseconds driver_time = kNever;
        if (have_request) {
            while (!finished.empty() && finished.top() <= t_driver) {
                ++free_places;
                finished.pop();
            }
            if (free_places > 0) driver_time = t_driver;
            else if (!finished.empty()) driver_time = std::max(t_driver, finished.top());
        }
        const Picoseconds event_time = queued_next_event();
        const Picoseconds now = std::min(driver_time, event_time);
        if (now == kNever) {
            if (have_request) throw std::logic_error("MemoryHierarchy::run_queued: stalled with requests left");
            break;
        }
        if (driver_time == now) {
            t_driver = now;
            if (free_places == 0) {
                ++free_places;
                finished.pop();
            }
            --free_places;
            if (first) result.first_issue = now, first = false;
            ++result.requests;
            result.bytes += req.bytes;
            const int requester = static_cast<int>(issued_requests++ % static_cast<std::uint64_t>(params_.requesters));
            queued_issue(requester, req.address, req.bytes, req.write, now, 0);
            have_request = traffic.next(req);
            t_driver += driver.issue_interval_ps;
            continue;
        }
        queued_step();
        for (const QueuedCompletion& c : completions) {
            finished.push(c.done);
            result.latency.record(c.done - c.issued);
            result.last_completion = std::max(result.last_completion, c.done);
        }
        completions.clear();
    }
    return result;
}

}  // namespace accelsim::memory
