#include "models/simt/warp_scheduler.h"

#include <algorithm>
#include <stdexcept>

#include "models/common/enum_names.h"

namespace accelsim::simt {

namespace {

void erase_value(std::vector<int>& v, int x) {
    const auto it = std::find(v.begin(), v.end(), x);
    if (it != v.end()) v.erase(it);
}

// Rotates `warps` so that the one after `last` comes first.
void rotate_after(const std::vector<int>& warps, int last, std::vector<int>& out) {
    out.clear();
    const auto it = std::find(warps.begin(), warps.end(), last);
    const std::size_t start = it == warps.end() ? 0 : static_cast<std::size_t>(it - warps.begin()) + 1;
    for (std::size_t i = 0; i < warps.size(); ++i) out.push_back(warps[(start + i) % warps.size()]);
}

// Orders are rebuilt only when they change (an issue, an arrival, a departure), not every cycle.
class LooseRoundRobin : public WarpScheduler {
public:
    void add(int w) override { warps_.push_back(w); dirty_ = true; }
    void remove(int w) override { erase_value(warps_, w); dirty_ = true; }
    const std::vector<int>& order() override {
        if (dirty_) rotate_after(warps_, last_, order_);
        dirty_ = false;
        return order_;
    }
    void issued(int w, bool, bool) override { last_ = w; dirty_ = true; }

private:
    std::vector<int> warps_, order_;
    int last_ = -1;
    bool dirty_ = true;
};

class GreedyThenOldest : public WarpScheduler {
public:
    void add(int w) override { by_age_.push_back(w); }
    void remove(int w) override {
        erase_value(by_age_, w);
        if (greedy_ == w) greedy_ = -1;
    }
    int preferred() const override { return greedy_; }  // the greedy warp, then the oldest
    const std::vector<int>& order() override { return by_age_; }
    void issued(int w, bool, bool) override { greedy_ = w; }

private:
    std::vector<int> by_age_;  // dispatch order, oldest first
    int greedy_ = -1;
};

class TwoLevel : public WarpScheduler {
public:
    explicit TwoLevel(int active_size) : active_size_(std::max(1, active_size)) {}
    void add(int w) override {
        if (static_cast<int>(active_.size()) < active_size_) active_.push_back(w);
        else pending_.push_back(w);
        dirty_ = true;
    }
    void remove(int w) override {
        dirty_ = true;
        erase_value(active_, w);
        erase_value(pending_, w);
        erase_value(at_barrier_, w);
        refill();
    }
    // Active warps round-robin first; pending warps (oldest first) only as a fallback when no active
    // warp can issue, so that the policy can never deadlock.
    const std::vector<int>& order() override {
        if (dirty_) {
            rotate_after(active_, last_, order_);
            order_.insert(order_.end(), pending_.begin(), pending_.end());
            dirty_ = false;
        }
        return order_;
    }
    void issued(int w, bool long_latency, bool barrier) override {
        last_ = w;
        dirty_ = true;
        if (std::find(pending_.begin(), pending_.end(), w) != pending_.end()) {
            // A pending warp issued as the fallback: it joins the active set, evicting the warp
            // that has been active longest.
            erase_value(pending_, w);
            active_.push_back(w);
            if (static_cast<int>(active_.size()) > active_size_) {
                pending_.push_back(active_.front());
                active_.erase(active_.begin());
            }
        }
        if (barrier) at_barrier_.push_back(w);
        if (long_latency || barrier) {
            erase_value(active_, w);
            pending_.push_back(w);
            refill();
        }
    }
    void released(int w) override {
        erase_value(at_barrier_, w);
        dirty_ = true;
    }

private:
    void refill() {
        // Promote the oldest pending warps that are not waiting at a barrier.
        for (std::size_t i = 0; i < pending_.size() && static_cast<int>(active_.size()) < active_size_;) {
            const int w = pending_[i];
            if (std::find(at_barrier_.begin(), at_barrier_.end(), w) != at_barrier_.end()) {
                ++i;
                continue;
            }
            active_.push_back(w);
            pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }
    int active_size_;
    std::vector<int> active_, pending_, order_, at_barrier_;
    int last_ = -1;
    bool dirty_ = true;
};

}  // namespace

const std::vector<std::string>& warp_scheduler_names() {
    static const std::vector<std::string> names{"lrr", "gto", "two_level"};
    return names;
}

std::unique_ptr<WarpScheduler> make_warp_scheduler(const std::string& name, int active_set_size) {
    if (name == "lrr") return std::make_unique<LooseRoundRobin>();
    if (name == "gto") return std::make_unique<GreedyThenOldest>();
    if (name == "two_level") return std::make_unique<TwoLevel>(active_set_size);
    throw std::invalid_argument("unknown warp scheduler '" + name + "' (expected " + join_names(warp_scheduler_names()) + ")");
}

}  // namespace accelsim::simt
