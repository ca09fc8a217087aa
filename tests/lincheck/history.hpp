// A recorded concurrent history: what each operation was asked, what it
// answered, and two timestamps that bracket it.
//
// Linearizability (Herlihy and Wing, "Linearizability: A Correctness
// Condition for Concurrent Objects", ACM TOPLAS 12(3), 1990,
// doi:10.1145/78969.78972) asks for one total order of the operations that
// respects real time (an operation that returned before another was invoked
// comes first) and in which every answer is the one the sequential
// specification gives. Only the interval between the two timestamps matters:
// an operation took effect somewhere inside it.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace smr::lincheck {

enum class op_kind : std::uint8_t { insert, remove, contains, enqueue, dequeue };

/// dequeue's answer when the queue was empty.
inline constexpr std::uint64_t empty_queue = std::numeric_limits<std::uint64_t>::max();

struct operation {
    /// ret of an operation that never returned (invoked, then the history
    /// was cut): it may have taken effect or not, with any answer.
    static constexpr std::uint64_t pending = std::numeric_limits<std::uint64_t>::max();

    std::uint64_t call = 0;    // timestamp taken before the operation began
    std::uint64_t ret = 0;     // timestamp taken after it returned; > call
    std::uint64_t arg = 0;     // the key (set) or the value (enqueue)
    std::uint64_t result = 0;  // 0 or 1 (set), the value or empty_queue (dequeue)
    std::uint32_t thread = 0;
    op_kind kind = op_kind::contains;

    bool is_pending() const noexcept { return ret == pending; }
};

using history = std::vector<operation>;

inline const char* name_of(op_kind kind) noexcept {
    switch (kind) {
        case op_kind::insert:
            return "insert";
        case op_kind::remove:
            return "remove";
        case op_kind::contains:
            return "contains";
        case op_kind::enqueue:
            return "enqueue";
        case op_kind::dequeue:
            return "dequeue";
    }
    return "?";
}

/// "t2 remove(5) -> false  [14, 19]", times relative to `origin`.
// Built by appending: GCC 12 at -O3 warns falsely (-Wrestrict, GCC bug 105329) inside
// `"literal" + std::string`, which prepends into the temporary.
inline std::string describe(const operation& op, std::uint64_t origin = 0) {
    std::string out = "t";
    out += std::to_string(op.thread);
    out += ' ';
    out += name_of(op.kind);
    out += '(';
    if (op.kind != op_kind::dequeue) out += std::to_string(op.arg);
    out += ')';
    if (op.is_pending()) {
        out += " pending";
    } else if (op.kind == op_kind::dequeue) {
        out += " -> ";
        out += op.result == empty_queue ? std::string("empty") : std::to_string(op.result);
    } else if (op.kind != op_kind::enqueue) {
        out += op.result != 0 ? " -> true" : " -> false";
    }
    out += "  [";
    out += std::to_string(op.call - origin);
    out += ", ";
    out += op.is_pending() ? std::string("...") : std::to_string(op.ret - origin);
    out += ']';
    return out;
}

/// One line per operation, in order of invocation.
inline void print(std::ostream& out, const history& h) {
    std::uint64_t origin = operation::pending;
    for (const operation& op : h) origin = op.call < origin ? op.call : origin;
    for (const operation& op : h) out << "  " << describe(op, origin) << "\n";
}

}  // namespace smr::lincheck
