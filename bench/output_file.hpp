// The files smrbench writes besides stdout (--timeline, --garbage-series):
// written so that no run, failed or interrupted, harms a file.
//
// Each output is written to a fresh file beside it (".NAME.smrbench-PID-N.tmp",
// created with O_EXCL, so no file of the user's is ever opened for writing)
// and renamed over NAME when complete: a reader sees the old file or the new
// one, never half of one. What NAME may be is checked before the trial runs:
// a missing file or a writable regular file in a directory smrbench can write.
// A directory, device, FIFO, socket or symbolic link is refused, since the
// rename would replace it (as root, `--timeline /dev/full` replaced the
// device with a regular file). A write that fails (full disk, RLIMIT_FSIZE)
// removes the temporary file and reports one line; SIGINT, SIGTERM, SIGHUP
// or SIGQUIT during the write remove it before the signal ends the process.
#pragma once

#include <pthread.h>

#include <csignal>
#include <functional>
#include <ostream>
#include <string>

namespace smrbench {

/// Why `path` cannot be an output ("is a directory", ...), or "" if it can.
/// Probes the directory by creating and removing a temporary file there.
std::string output_problem(const std::string& path);

/// Writes through `fill` into a new temporary file beside `path`, then
/// renames it over `path` (re-checked: still missing or a regular file).
/// On any failure the temporary file is removed and std::runtime_error
/// carries one line naming `path` and the reason.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

/// While it lives, this thread does not take SIGINT, SIGTERM, SIGHUP or
/// SIGQUIT (they wait, pending): around a change of the file the handler
/// removes, and around the creation of a thread, which inherits the mask and
/// so leaves those signals to the main thread.
class stop_signals_blocked {
  public:
    stop_signals_blocked() {
        sigset_t stops;
        sigemptyset(&stops);
        for (const int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&stops, signal);
        pthread_sigmask(SIG_BLOCK, &stops, &previous_);
    }
    ~stop_signals_blocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
    stop_signals_blocked(const stop_signals_blocked&) = delete;
    stop_signals_blocked& operator=(const stop_signals_blocked&) = delete;

  private:
    sigset_t previous_;
};

/// Once, at the start of main: SIGINT, SIGTERM, SIGHUP and SIGQUIT remove a
/// temporary file being written, then end the process as they would have
/// (a signal the parent set to be ignored stays ignored); SIGXFSZ and SIGPIPE
/// are ignored so that exceeding the file size limit or writing to a closed
/// pipe fails the write, which finish_standard_output reports, instead of
/// killing the process without a word.
void install_output_signal_handlers();

/// At the end of main, with the exit status the run earned: flushes standard
/// output and returns `status` if everything written there arrived, else
/// says so in one line on stderr and returns 1 (or `status` if that is
/// already a failure). Standard output is an output like any other: a JSON
/// result cut short by a full disk, /dev/full or a closed pipe must not exit 0.
int finish_standard_output(int status);

}  // namespace smrbench
