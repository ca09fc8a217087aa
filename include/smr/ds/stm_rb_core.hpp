// The transactional red-black tree's algorithm, once, for every tree that
// runs on smrlab's STM: stm_rbtree (a set with a value per key, one
// transaction per operation) and the STAMP applications' maps (several trees
// and other objects under one transaction, bench/stamp/). A tree is a root
// word; a view binds it to one transaction for the span of an operation.
//
// The algorithm is java.util.TreeMap's (Cormen et al.'s red-black tree with
// parent pointers) as STAMP's lib/rbtree.c transcribes it, with every field
// access transactional: insert walks down and links a red leaf, then
// recolours and rotates up (fix_after_insertion); erase of a node with two
// children copies its in-order successor's key and value into it and removes
// the successor instead, then links the removed node's child in its place
// and rebalances (fix_after_deletion), clears the removed node's links and
// frees it with the transaction (its words locked until the commit, TinySTM's
// stm_free). A null child is black. Keys change (the successor's copy), so
// nothing is read plainly while transactions run.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "smr/ds/validation.hpp"
#include "smr/stm/transaction.hpp"

namespace smr::ds {

/// STAMP's node: key, value, parent, left, right and colour, six words, 48
/// bytes, no header. No allocator has a 48-byte class in common: glibc and
/// Hoard round it up to 64 bytes, jemalloc, tcmalloc, mimalloc and tbbmalloc
/// have 48-byte classes, so consecutive nodes start 48 bytes apart and the
/// last 16 bytes of one share a 32-byte stripe with the first 16 of the next
/// (the allocator/STM study's Section 5.3).
struct stm_rb_node {
    std::int64_t key;
    std::int64_t value;
    stm_rb_node* parent;
    stm_rb_node* left;
    stm_rb_node* right;
    std::int64_t colour;

    static constexpr std::int64_t red = 0;
    static constexpr std::int64_t black = 1;
};
static_assert(sizeof(stm_rb_node) == 48);

/// One transaction's view of the tree whose root is the transactional word
/// `root`: TreeMap's helpers with every field read and written through `tx`.
class stm_rb_view {
    using node = stm_rb_node;
    static constexpr std::int64_t red = node::red;
    static constexpr std::int64_t black = node::black;

  public:
    stm_rb_view(node*& root, stm::transaction& tx) noexcept : root_(root), tx_(tx) {}

    /// The node holding `key`, or null.
    node* find(std::int64_t key) {
        node* n = root();
        while (n != nullptr) {
            const std::int64_t k = get(n, &node::key);
            if (key == k) return n;
            n = get(n, key < k ? &node::left : &node::right);
        }
        return nullptr;
    }

    /// The value of a node find returned, read in this transaction.
    std::int64_t value_of(node* n) { return get(n, &node::value); }

    /// Inserts key with value; false (nothing allocated) if key is there.
    bool insert(std::int64_t key, std::int64_t value) {
        node* parent = nullptr;
        node* n = root();
        bool go_left = false;
        while (n != nullptr) {
            const std::int64_t k = get(n, &node::key);
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

    /// Removes key; false if it is not there.
    bool erase(std::int64_t key) {
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

    node* root() { return tx_.load(&root_); }
    void set_root(node* n) { tx_.store(&root_, n, {&root_, sizeof(node*)}); }

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

    node*& root_;
    stm::transaction& tx_;
};

/// Quiescent only. Checks the tree at `root`: keys strictly ascending in
/// order, every child's parent pointer, a black root, no red node with a red
/// child, the same number of black nodes on every path from the root to a
/// null child. Adds its keys to result.key_sum and its nodes to result.size.
void check_stm_rb_tree(const stm_rb_node* root, validation_result& result);

/// Quiescent only: visits every node in key order.
template <class F>
void for_each_stm_rb_node(const stm_rb_node* root, F&& visit) {
    std::vector<const stm_rb_node*> path;
    for (const stm_rb_node* n = root; n != nullptr || !path.empty();) {
        for (; n != nullptr; n = n->left) path.push_back(n);
        n = path.back();
        path.pop_back();
        visit(*n);
        n = n->right;
    }
}

/// No transaction may run: frees every node of the tree at `root`.
inline void free_stm_rb_tree(stm_rb_node* root) {
    std::vector<stm_rb_node*> pending;
    if (root != nullptr) pending.push_back(root);
    while (!pending.empty()) {
        stm_rb_node* n = pending.back();
        pending.pop_back();
        if (n->left != nullptr) pending.push_back(n->left);
        if (n->right != nullptr) pending.push_back(n->right);
        std::free(n);
    }
}

namespace detail {
/// The subtree at `n` in order; its black height (null: 1), or 0 once a
/// violation is recorded.
inline int check_stm_rb_subtree(const stm_rb_node* n, const stm_rb_node*& previous,
                                std::uint64_t& sum, validation_result& result) {
    using node = stm_rb_node;
    if (n == nullptr) return 1;
    for (const node* child : {n->left, n->right}) {
        if (child != nullptr && child->parent != n) {
            result.fail("key " + std::to_string(child->key) + ": parent pointer is wrong");
            return 0;
        }
        if (child != nullptr && n->colour == node::red && child->colour == node::red) {
            result.fail("red key " + std::to_string(n->key) + " has a red child");
            return 0;
        }
    }
    const int left = check_stm_rb_subtree(n->left, previous, sum, result);
    if (left == 0) return 0;
    if (previous != nullptr && !(previous->key < n->key)) {
        result.fail("keys not ascending in order: " + std::to_string(previous->key) + " then " +
                    std::to_string(n->key));
        return 0;
    }
    if (n->colour != node::red && n->colour != node::black) {
        result.fail("key " + std::to_string(n->key) + " has no colour");
        return 0;
    }
    previous = n;
    sum += static_cast<std::uint64_t>(n->key);
    ++result.size;
    const int right = check_stm_rb_subtree(n->right, previous, sum, result);
    if (right == 0) return 0;
    if (left != right) {
        result.fail("black heights differ below key " + std::to_string(n->key));
        return 0;
    }
    return left + (n->colour == node::black ? 1 : 0);
}
}  // namespace detail

inline void check_stm_rb_tree(const stm_rb_node* root, validation_result& result) {
    if (root != nullptr && root->parent != nullptr) result.fail("root has a parent");
    if (root != nullptr && root->colour != stm_rb_node::black) result.fail("root is red");
    const stm_rb_node* previous = nullptr;
    std::uint64_t sum = static_cast<std::uint64_t>(result.key_sum);
    detail::check_stm_rb_subtree(root, previous, sum, result);
    result.key_sum = static_cast<std::int64_t>(sum);
}

}  // namespace smr::ds
