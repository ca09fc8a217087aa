#include "registry.hpp"

#include <algorithm>

namespace smrbench {

const std::vector<combination>& combinations() {
    static const std::vector<combination> all = [] {
        std::vector<combination> out = lazylist_combinations();
        for (auto& c : dgt_bst_combinations()) out.push_back(c);
        for (auto& c : harris_list_combinations()) out.push_back(c);
        for (auto& c : hm_list_combinations()) out.push_back(c);
        for (auto& c : abtree_combinations()) out.push_back(c);
        for (auto& c : occ_avl_combinations()) out.push_back(c);
        for (auto& c : ms_queue_combinations()) out.push_back(c);
        for (auto& c : hash_set_combinations()) out.push_back(c);
        for (auto& c : cr_list_combinations()) out.push_back(c);
        for (auto& c : cr_hash_set_combinations()) out.push_back(c);
        for (auto& c : lock_list_combinations()) out.push_back(c);
        for (auto& c : stm_list_combinations()) out.push_back(c);
        for (auto& c : stm_hash_set_combinations()) out.push_back(c);
        for (auto& c : stm_rbtree_combinations()) out.push_back(c);
        return out;
    }();
    return all;
}

const combination* find_combination(std::string_view ds, std::string_view reclaimer) {
    for (const auto& c : combinations()) {
        if (c.structure.name == ds && c.reclaimer.name == reclaimer) return &c;
    }
    return nullptr;
}

std::vector<std::string_view> ds_names() {
    std::vector<std::string_view> names;
    for (const auto& c : combinations()) {
        const std::string_view name = c.structure.name;
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    return names;
}

std::vector<smr::reclaimer_traits> reclaimers() {
    std::vector<smr::reclaimer_traits> out;
    for (const auto& c : combinations()) {
        const bool seen = std::any_of(out.begin(), out.end(),
                                      [&](const auto& r) { return r.name == c.reclaimer.name; });
        if (!seen) out.push_back(c.reclaimer);
    }
    return out;
}

bool is_ds_name(std::string_view name) {
    const auto names = ds_names();
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::int64_t default_key_range_of(std::string_view ds) {
    for (const auto& c : combinations()) {
        if (c.structure.name == ds) return c.default_key_range;
    }
    return other_default_key_range;
}

std::optional<smr::reclaimer_traits> reclaimer_named(std::string_view name) {
    for (const auto& c : combinations()) {
        if (c.reclaimer.name == name) return c.reclaimer;
    }
    return std::nullopt;
}

bool is_reclaimer_name(std::string_view name) { return reclaimer_named(name).has_value(); }

}  // namespace smrbench
