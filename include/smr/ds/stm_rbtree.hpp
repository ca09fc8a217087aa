// Transactional red-black tree: every operation one transaction of smrlab's
// word-based STM (smr/stm/). It is the red-black tree of Baldassin, Borin and
// Araujo's allocator study ("On the Impact of Memory Allocators on the
// Performance of Software Transactional Memory", TRANSACT 2014, Section 5.3),
// the tree of TinySTM's integer-set benchmark, which is STAMP's rbtree, which
// is java.util.TreeMap's algorithm (Cormen et al.'s red-black tree with
// parent pointers) with every field access transactional.
//
// ---- What it is for -----------------------------------------------------------
//
// Its nodes are the paper's 48 bytes: key, value, parent, left, right and
// colour, six words. No allocator has a 48-byte class in common: glibc and
// Hoard round it up to 64 bytes, jemalloc, tcmalloc, mimalloc and tbbmalloc
// have 48-byte classes, so consecutive nodes start 48 bytes apart and the
// last 16 bytes of one share a 32-byte stripe with the first 16 of the next
// (Section 5.3: a false conflict glibc's 64-byte blocks cannot have).
// Transactions are short (a root-to-leaf path, about 2 log n nodes, and a
// rebalancing that rotates near the leaf), but every update writes the
// parent and colour words of several nodes.
//
// ---- The algorithm -------------------------------------------------------------
//
// TreeMap's, as STAMP transcribes it: insert walks down and links a red leaf,
// then recolours and rotates up (fix_after_insertion); erase of a node with
// two children copies its in-order successor's key and value into it and
// removes the successor instead, then links the removed node's child in its
// place and rebalances (fix_after_deletion), clears the removed node's links
// and frees it with the transaction (its words locked until the commit,
// TinySTM's stm_free). A null child is black. Every load and store,
// colours and keys included, is transactional: keys change (the successor's
// copy), so nothing here is read plainly while transactions run.
//
// Reclamation, progress and the rules for callers: as stm_list's (the STM's
// pointer blocks; a thread calls flush(tid) before releasing its handle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "smr/ds/key_range.hpp"
#include "smr/ds/options.hpp"
#include "smr/ds/stm_structure.hpp"
#include "smr/ds/validation.hpp"

namespace smr::ds {

/// The transactional red-black tree as a set of std::int64_t keys in
/// [min_key, max_key] with a value per key.
template <class Domain>
class stm_rbtree : public detail::stm_structure<Domain> {
    friend struct smr::ds::testing::access;  // tests corrupt internals

    using base = detail::stm_structure<Domain>;

    /// STAMP's node: six words, 48 bytes, no header.
    struct node {
        std::int64_t key;
        std::int64_t value;
        node* parent;
        node* left;
        node* right;
        std::int64_t colour;
    };
    static_assert(sizeof(node) == 48);
    static constexpr std::int64_t red = 0;
    static constexpr std::int64_t black = 1;

    class access;

  public:
    using key_type = std::int64_t;
    using value_type = std::int64_t;

    static constexpr std::string_view name = "stm_rbtree";
    static constexpr key_type min_key = std::numeric_limits<key_type>::min() + 1;
    static constexpr key_type max_key = std::numeric_limits<key_type>::max() - 1;
    static constexpr std::size_t node_size = sizeof(node);

    /// `domain` must outlive the tree; options.ort_bits and options.ort_shift
    /// map addresses to the STM's versioned locks.
    explicit stm_rbtree(Domain& domain, const ds_options& options = {}) : base(domain, options) {}

    /// Frees every node. No operation may be running.
    ~stm_rbtree() {
        std::vector<node*> pending;
        if (root_ != nullptr) pending.push_back(root_);
        while (!pending.empty()) {
            node* n = pending.back();
            pending.pop_back();
            if (n->left != nullptr) pending.push_back(n->left);
            if (n->right != nullptr) pending.push_back(n->right);
            std::free(n);
        }
    }

    bool insert(int tid, key_type key, value_type value) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(tid, [&](stm::transaction& tx) {
            return access{*this, tx}.insert(key, value);
        });
    }

    bool erase(int tid, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(tid, [&](stm::transaction& tx) {
            return access{*this, tx}.erase(key);
        });
    }

    bool contains(int tid, key_type key) {
        detail::check_key(key, min_key, max_key);
        return this->stm_.atomically(tid, [&](stm::transaction& tx) {
            return access{*this, tx}.find(key) != nullptr;
        });
    }

    /// Quiescent only (no operation on the set runs): how many keys it
    /// holds, counted by a walk of the whole structure, O(n).
    std::size_t size() const { return validate().size; }

    /// Quiescent only. Checks: keys strictly ascending in order, every child's
    /// parent pointer, a black root, no red node with a red child, the same
    /// number of black nodes on every path from the root to a null child,
    /// and no versioned lock left held; sums keys and counts nodes.
    validation_result validate() const {
        validation_result result;
        std::uint64_t sum = 0;
        if (root_ != nullptr && root_->parent != nullptr) result.fail("root has a parent");
        if (root_ != nullptr && root_->colour != black) result.fail("root is red");
        const node* previous = nullptr;
        check_subtree(root_, previous, sum, result);
        result.key_sum = static_cast<std::int64_t>(sum);
        this->check_locks_released(result);
        return result;
    }

  private:
    /// Checks the subtree at `n` in order; returns its black height (null: 1),
    /// or 0 once a violation is recorded.
    static int check_subtree(const node* n, const node*& previous, std::uint64_t& sum,
                             validation_result& result) {
        if (n == nullptr) return 1;
        for (const node* child : {n->left, n->right}) {
            if (child != nullptr && child->parent != n) {
                result.fail("key " + std::to_string(child->key) + ": parent pointer is wrong");
                return 0;
            }
            if (child != nullptr && n->colour == red && child->colour == red) {
                result.fail("red key " + std::to_string(n->key) + " has a red child");
                return 0;
            }
        }
        const int left = check_subtree(n->left, previous, sum, result);
        if (left == 0) return 0;
        if (previous != nullptr && !(previous->key < n->key)) {
            result.fail("keys not ascending in order: " + std::to_string(previous->key) + " then " +
                        std::to_string(n->key));
            return 0;
        }
        if (n->colour != red && n->colour != black) {
            result.fail("key " + std::to_string(n->key) + " has no colour");
            return 0;
        }
        previous = n;
        sum += static_cast<std::uint64_t>(n->key);
        ++result.size;
        const int right = check_subtree(n->right, previous, sum, result);
        if (right == 0) return 0;
        if (left != right) {
            result.fail("black heights differ below key " + std::to_string(n->key));
            return 0;
        }
        return left + (n->colour == black ? 1 : 0);
    }

    node* root_ = nullptr;  // a transactional word
};

/// One transaction's view of the tree: TreeMap's helpers with every field
/// read and written through the transaction.
template <class Domain>
class stm_rbtree<Domain>::access {
  public:
    access(stm_rbtree& tree, stm::transaction& tx) : tree_(tree), tx_(tx) {}

    node* find(key_type key) {
        node* n = root();
        while (n != nullptr) {
            const key_type k = get(n, &node::key);
            if (key == k) return n;
            n = get(n, key < k ? &node::left : &node::right);
        }
        return nullptr;
    }

    bool insert(key_type key, value_type value) {
        node* parent = nullptr;
        node* n = root();
        bool go_left = false;
        while (n != nullptr) {
            const key_type k = get(n, &node::key);
            if (key == k) return false;
            parent = n;
            go_left = key < k;
            n = get(n, go_left ? &node::left : &node::right);
        }
        node* added = tx_.make<node>(key, value, parent, nullptr, nullptr, red);
        if (parent == nullptr) {
            set_root(added);
        } else {
            set(parent, go_left ? &node::left : &node::right, added);
        }
        fix_after_insertion(added);
        return true;
    }

    bool erase(key_type key) {
        node* p = find(key);
        if (p == nullptr) return false;
        if (get(p, &node::left) != nullptr && get(p, &node::right) != nullptr) {
            node* s = successor(p);
            set(p, &node::key, get(s, &node::key));
            set(p, &node::value, get(s, &node::value));
            p = s;
        }
        unlink(p);
        tx_.free(p);
        return true;
    }

  private:
    /// TreeMap's deleteEntry after the successor copy: p has at most one
    /// child.
    void unlink(node* p) {
        node* replacement = get(p, &node::left);
        if (replacement == nullptr) replacement = get(p, &node::right);
        node* parent = get(p, &node::parent);
        if (replacement != nullptr) {
            set(replacement, &node::parent, parent);
            replace_child(parent, p, replacement);
            clear_links(p);
            if (get(p, &node::colour) == black) fix_after_deletion(replacement);
        } else if (parent == nullptr) {
            set_root(nullptr);
        } else {
            if (get(p, &node::colour) == black) fix_after_deletion(p);
            parent = get(p, &node::parent);  // the fix-up may have rotated p down
            if (parent != nullptr) {
                if (get(parent, &node::left) == p) {
                    set(parent, &node::left, static_cast<node*>(nullptr));
                } else if (get(parent, &node::right) == p) {
                    set(parent, &node::right, static_cast<node*>(nullptr));
                }
                set(p, &node::parent, static_cast<node*>(nullptr));
            }
        }
    }

    void fix_after_insertion(node* x) {
        set(x, &node::colour, red);
        while (x != nullptr && x != root() && colour_of(parent_of(x)) == red) {
            node* grand = parent_of(parent_of(x));
            const bool parent_is_left = parent_of(x) == left_of(grand);
            node* uncle = parent_is_left ? right_of(grand) : left_of(grand);
            if (colour_of(uncle) == red) {
                set_colour(parent_of(x), black);
                set_colour(uncle, black);
                set_colour(grand, red);
                x = grand;
                continue;
            }
            if (x == (parent_is_left ? right_of(parent_of(x)) : left_of(parent_of(x)))) {
                x = parent_of(x);
                rotate(x, parent_is_left);
            }
            set_colour(parent_of(x), black);
            set_colour(parent_of(parent_of(x)), red);
            rotate(parent_of(parent_of(x)), !parent_is_left);
        }
        set_colour(root(), black);
    }

    void fix_after_deletion(node* x) {
        while (x != root() && colour_of(x) == black) {
            const bool is_left = x == left_of(parent_of(x));
            node* sibling = is_left ? right_of(parent_of(x)) : left_of(parent_of(x));
            if (colour_of(sibling) == red) {
                set_colour(sibling, black);
                set_colour(parent_of(x), red);
                rotate(parent_of(x), is_left);
                sibling = is_left ? right_of(parent_of(x)) : left_of(parent_of(x));
            }
            node* near = is_left ? left_of(sibling) : right_of(sibling);
            node* far = is_left ? right_of(sibling) : left_of(sibling);
            if (colour_of(near) == black && colour_of(far) == black) {
                set_colour(sibling, red);
                x = parent_of(x);
                continue;
            }
            if (colour_of(far) == black) {
                set_colour(near, black);
                set_colour(sibling, red);
                rotate(sibling, !is_left);
                sibling = is_left ? right_of(parent_of(x)) : left_of(parent_of(x));
            }
            set_colour(sibling, colour_of(parent_of(x)));
            set_colour(parent_of(x), black);
            set_colour(is_left ? right_of(sibling) : left_of(sibling), black);
            rotate(parent_of(x), is_left);
            x = root();
        }
        set_colour(x, black);
    }

    /// TreeMap's rotateLeft (left: true) or rotateRight at p.
    void rotate(node* p, bool left) {
        if (p == nullptr) return;
        node* node::*const towards = left ? &node::right : &node::left;  // the child that rises
        node* node::*const away = left ? &node::left : &node::right;
        node* up = get(p, towards);
        node* inner = get(up, away);
        set(p, towards, inner);
        if (inner != nullptr) set(inner, &node::parent, p);
        node* parent = get(p, &node::parent);
        set(up, &node::parent, parent);
        replace_child(parent, p, up);
        set(up, away, p);
        set(p, &node::parent, up);
    }

    /// parent's link to `old` (the root if parent is null) now points at
    /// `replacement`.
    void replace_child(node* parent, node* old, node* replacement) {
        if (parent == nullptr) {
            set_root(replacement);
        } else if (get(parent, &node::left) == old) {
            set(parent, &node::left, replacement);
        } else {
            set(parent, &node::right, replacement);
        }
    }

    void clear_links(node* p) {
        set(p, &node::left, static_cast<node*>(nullptr));
        set(p, &node::right, static_cast<node*>(nullptr));
        set(p, &node::parent, static_cast<node*>(nullptr));
    }

    node* successor(node* t) {
        node* p = get(t, &node::right);
        for (node* l = get(p, &node::left); l != nullptr; l = get(p, &node::left)) p = l;
        return p;
    }

    // TreeMap's null-tolerant accessors: a null node is black and has no
    // relatives.
    std::int64_t colour_of(node* n) { return n == nullptr ? black : get(n, &node::colour); }
    node* parent_of(node* n) { return n == nullptr ? nullptr : get(n, &node::parent); }
    node* left_of(node* n) { return n == nullptr ? nullptr : get(n, &node::left); }
    node* right_of(node* n) { return n == nullptr ? nullptr : get(n, &node::right); }
    void set_colour(node* n, std::int64_t c) {
        if (n != nullptr) set(n, &node::colour, c);
    }

    node* root() { return tx_.load(&tree_.root_); }
    void set_root(node* n) { tx_.store(&tree_.root_, n, {&tree_.root_, sizeof(node*)}); }

    template <class T>
    T get(node* n, T node::*field) {
        return tx_.load(&(n->*field));
    }
    /// A store names its node, so that conflicts between the words of one
    /// 48-byte node count as true and only those with a neighbouring node
    /// that shares a stripe as false.
    template <class T>
    void set(node* n, T node::*field, T value) {
        tx_.store(&(n->*field), value, {n, sizeof(node)});
    }

    stm_rbtree& tree_;
    stm::transaction& tx_;
};

}  // namespace smr::ds
