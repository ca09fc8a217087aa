#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <streambuf>

namespace smrbench {
namespace {

namespace fs = std::filesystem;

// ---- the temporary file a signal must remove ---------------------------------
// One output is written at a time, by the main thread; a signal handler, on
// whichever thread the signal lands, reads the name. The name is written only
// while `pending` is false; the release store that sets it pairs with the
// handler's acquire load, so a handler that sees true sees the whole name.
// (A lock-free atomic is async-signal-safe.)

char pending_name[4096];
std::atomic<bool> pending{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void set_pending(const std::string& name) {
    if (name.size() >= sizeof pending_name) return;  // too long to keep: not removed on a signal
    std::memcpy(pending_name, name.c_str(), name.size() + 1);
    pending.store(true, std::memory_order_release);
}

void clear_pending() { pending.store(false, std::memory_order_relaxed); }

extern "C" void remove_pending_then_die(int signal) {
    if (pending.load(std::memory_order_acquire))
        ::unlink(pending_name);  // async-signal-safe, as is raise
    // SA_RESETHAND restored the default action; the signal, blocked while
    // this handler runs, ends the process as soon as the handler returns.
    ::raise(signal);
}

// ---- writing through a file descriptor ---------------------------------------

/// An output stream buffer over a file descriptor that remembers the errno
/// of the first failed write (an ofstream keeps only "failed").
class fd_buffer : public std::streambuf {
  public:
    explicit fd_buffer(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
    int error() const { return error_; }

  protected:
    int_type overflow(int_type c) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return drain() ? 0 : -1; }

  private:
    bool drain() {
        const char* next = pbase();
        while (error_ == 0 && next < pptr()) {
            const ssize_t wrote = ::write(fd_, next, static_cast<std::size_t>(pptr() - next));
            if (wrote >= 0) {
                next += wrote;
            } else if (errno != EINTR) {
                error_ = errno;
            }
        }
        setp(buffer_.data(), buffer_.data() + buffer_.size());
        return error_ == 0;
    }

    int fd_;
    int error_ = 0;
    std::array<char, 1 << 16> buffer_;
};

/// ".NAME.smrbench-PID-N.tmp" beside `path`.
std::string temporary_name(const std::string& path, int n) {
    const fs::path p(path);
    // Appended piece by piece: "." + std::string trips GCC 12's -Wrestrict
    // (a false positive, GCC bug 105329).
    std::string name(".");
    name += p.filename().string();
    name += ".smrbench-";
    name += std::to_string(::getpid());
    name += '-';
    name += std::to_string(n);
    name += ".tmp";
    return (p.parent_path() / name).string();
}

struct temporary_file {
    int fd = -1;
    std::string name;
};

/// Creates a temporary file beside `path` that did not exist before (O_EXCL:
/// never someone else's), registered for removal on a signal. The signals
/// are held back from creation to registration, so a file is never left
/// unregistered and a name that is not ours is never registered. fd -1 and
/// errno set if none can be created.
temporary_file create_temporary(const std::string& path) {
    for (int n = 0; n < 1000; ++n) {
        temporary_file t{-1, temporary_name(path, n)};
        const stop_signals_blocked held;
        t.fd = ::open(t.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (t.fd >= 0) {
            set_pending(t.name);
            return t;
        }
        if (errno != EEXIST) return t;
    }
    errno = EEXIST;
    return {};
}

/// The reason an existing `path` may not be replaced, or "" (also if it
/// does not exist).
std::string existing_file_problem(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return "";
        return std::string("cannot be examined: ") + std::strerror(errno);
    }
    if (S_ISLNK(st.st_mode)) {
        return "is a symbolic link (smrbench renames a new file over its output, which would "
               "replace the link; name the file it points to)";
    }
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (!S_ISREG(st.st_mode)) {
        return "is not a regular file (a device, FIFO or socket); smrbench writes only regular "
               "files";
    }
    if (::access(path.c_str(), W_OK) != 0) return "is read-only";
    return "";
}

/// The file that `path` names, if any, keeps its permissions and owner
/// when the new one replaces it (a 0600 timeline stays private; as root, a
/// user's file stays the user's); a new file has the umask's mode.
void keep_mode_and_owner(const std::string& path, int fd) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    // Best effort: failing either, the output is still written whole. The
    // owner first, since a change of owner clears set-id bits.
    if (::geteuid() == 0 && ::fchown(fd, st.st_uid, st.st_gid) != 0) errno = 0;
    if (::fchmod(fd, st.st_mode & 07777) != 0) errno = 0;
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
    throw std::runtime_error("cannot write " + path + ": " + what + std::strerror(error));
}

}  // namespace

std::string output_problem(const std::string& path) {
    if (std::string reason = existing_file_problem(path); !reason.empty()) return reason;
    const fs::path parent = fs::path(path).parent_path();
    const std::string directory = parent.empty() ? "." : parent.string();
    struct stat st {};
    if (::stat(directory.c_str(), &st) != 0) {
        return "cannot be created: its directory " + directory + " " +
               (errno == ENOENT ? std::string("does not exist") : std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) return "cannot be created: " + directory + " is not a directory";
    const temporary_file probe = create_temporary(path);
    if (probe.fd < 0) {
        return "cannot be created in " + directory + ": " + std::strerror(errno);
    }
    ::close(probe.fd);
    ::unlink(probe.name.c_str());
    clear_pending();
    return "";
}

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& fill) {
    temporary_file temporary = create_temporary(path);
    if (temporary.fd < 0) fail(path, "cannot create a temporary file beside it: ", errno);
    // Whatever ends this function before the rename (a failed write, an
    // exception from `fill`) removes the temporary file.
    struct discard_unless_renamed {
        temporary_file& t;
        bool renamed = false;
        ~discard_unless_renamed() {
            if (t.fd >= 0) ::close(t.fd);
            if (!renamed) ::unlink(t.name.c_str());
            clear_pending();
        }
    } guard{temporary};
    fd_buffer buffer(temporary.fd);
    {
        std::ostream out(&buffer);
        fill(out);
        out.flush();
    }
    if (buffer.error() != 0) fail(path, "", buffer.error());
    keep_mode_and_owner(path, temporary.fd);
    // Durable before it replaces the old file: a crash leaves one or the other.
    if (::fsync(temporary.fd) != 0 && errno != EINVAL) fail(path, "", errno);
    const int closed = ::close(temporary.fd);
    temporary.fd = -1;
    if (closed != 0) fail(path, "", errno);
    if (std::string reason = existing_file_problem(path); !reason.empty()) {
        throw std::runtime_error("cannot write " + path + ": it " + reason);
    }
    if (::rename(temporary.name.c_str(), path.c_str()) != 0) {
        fail(path, "cannot rename the temporary file over it: ", errno);
    }
    guard.renamed = true;
}

void install_output_signal_handlers() {
    for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
        struct sigaction current {};
        ::sigaction(signal, nullptr, &current);
        if (current.sa_handler == SIG_IGN) continue;  // e.g. started under nohup
        struct sigaction action {};
        action.sa_handler = remove_pending_then_die;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESETHAND;
        ::sigaction(signal, &action, nullptr);
    }
    ::signal(SIGXFSZ, SIG_IGN);
    ::signal(SIGPIPE, SIG_IGN);
}

int finish_standard_output(int status) {
    // std::cout is synchronized with stdio: its writes go to stdout's buffer,
    // which a long output (a listing) already wrote in part, else this flush
    // does; either is where a full disk or a closed pipe shows up, as the
    // failbit with errno from the failed write. When the printing itself
    // failed, nothing since has touched errno but the printing's own calls.
    const int while_printing = std::cout.fail() ? errno : 0;
    errno = 0;
    std::cout.flush();
    const bool failed = std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
    if (!failed) return status;
    const int error = errno != 0 ? errno : while_printing;
    std::cerr << "smrbench: error: cannot write to standard output"
              << (error != 0 ? std::string(": ") + std::strerror(error) : std::string())
              << "; the results printed there are incomplete\n";
    return status != 0 ? status : 1;
}

}  // namespace smrbench
