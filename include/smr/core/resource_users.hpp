// Which memory resources a domain still allocates from, so that a resource
// that frees its memory when destroyed (smr::alloc::pool_resource) can refuse
// to go while a domain would still give nodes back to it: the domain's
// destructor frees every node it holds, into that resource.
//
// A count per resource under one mutex, touched when a domain is made and
// destroyed, and when such a resource is destroyed: never per operation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace smr::core {

class resource_users {
  public:
    /// A domain begins to allocate from `resource`.
    static void attach(const void* resource) {
        auto& self = instance();
        const std::lock_guard<std::mutex> lock(self.mutex_);
        auto it = self.find(resource);
        if (it == self.counts_.end()) {
            self.counts_.emplace_back(resource, 1);
        } else {
            ++it->second;
        }
    }
    /// The domain has given back every node it took from `resource`.
    static void detach(const void* resource) noexcept {
        auto& self = instance();
        const std::lock_guard<std::mutex> lock(self.mutex_);
        auto it = self.find(resource);
        if (it != self.counts_.end() && --it->second == 0) self.counts_.erase(it);
    }
    /// How many domains allocate from `resource` now.
    static std::size_t count(const void* resource) noexcept {
        auto& self = instance();
        const std::lock_guard<std::mutex> lock(self.mutex_);
        auto it = self.find(resource);
        return it == self.counts_.end() ? 0 : it->second;
    }

  private:
    using entry = std::pair<const void*, std::size_t>;

    /// Never destroyed: domains may be destroyed while static destructors run.
    static resource_users& instance() {
        static resource_users* const users = new resource_users();
        return *users;
    }
    std::vector<entry>::iterator find(const void* resource) noexcept {
        return std::find_if(counts_.begin(), counts_.end(),
                            [resource](const entry& e) { return e.first == resource; });
    }

    std::mutex mutex_;
    std::vector<entry> counts_;
};

}  // namespace smr::core
