#pragma once
// A FIFO on one power-of-two ring that doubles when full, for the memory models' queues: a
// std::deque allocates and frees a block every few hundred bytes of traffic (which these queues
// would do millions of times) and indexes through a block map on every access.
#include <cstddef>
#include <vector>

namespace accelsim::memory {

template <typename T>
class RingQueue {
public:
    bool empty() const { return head_ == tail_; }
    std::size_t size() const { return tail_ - head_; }
    T& front() { return ring_[head_ & mask_]; }
    const T& front() const { return ring_[head_ & mask_]; }
    const T& back() const { return ring_[(tail_ - 1) & mask_]; }
    T& operator[](std::size_t i) { return ring_[(head_ + i) & mask_]; }
    const T& operator[](std::size_t i) const { return ring_[(head_ + i) & mask_]; }
    void pop_front() { ++head_; }
    void push_back(const T& v) {
        if (size() == ring_.size()) grow();
        ring_[tail_++ & mask_] = v;
    }
    // Removes entry i, keeping the others in order: the ones before it move up by one (the
    // short side when i is near the front, as a DRAM scheduler's picks mostly are).
    void erase(std::size_t i) {
        for (; i > 0; --i) (*this)[i] = (*this)[i - 1];
        ++head_;
    }

private:
    void grow() {
        std::vector<T> bigger(ring_.empty() ? 16 : 2 * ring_.size());
        for (std::size_t i = 0; i < size(); ++i) bigger[i] = (*this)[i];
        tail_ = size();
        head_ = 0;
        ring_.swap(bigger);
        mask_ = ring_.size() - 1;
    }
    std::vector<T> ring_;
    std::size_t head_ = 0, tail_ = 0, mask_ = 0;
};

}  // namespace accelsim::memory
