#include "c_compiler.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace c_codegen_plugin {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLog = 4096;

// Removes the directory, whatever happens to the build.
class TempDir {
 public:
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/tune-c-codegen-plugin.XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) {
      path_ = pattern;
    }
  }
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::vector<std::string> CompilerCommand() {
  std::vector<std::string> words;
  const char* env = std::getenv("TUNE_PLUGIN_CC");
  std::istringstream in(env != nullptr ? env : "");
  for (std::string word; in >> word;) {
    words.push_back(word);
  }
  if (words.empty()) {
    words.push_back("cc");
  }
  for (const char* flag : {"-c", "-O3", "-march=native", "-fPIC", "-std=c11", "-ffp-contract=fast",
                           "-o", "out.o", "src.c"}) {
    words.push_back(flag);
  }
  return words;
}

std::string Describe(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& word : argv) {
    s += (s.empty() ? "" : " ") + word;
  }
  return s;
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs argv in `dir` with stdin from /dev/null and stdout + stderr into `log`; returns the
// wait status, or -1 with *error set when it could not be started.
int Run(const std::vector<std::string>& argv, const fs::path& dir, const fs::path& log,
        std::string* error) {
  std::vector<char*> args;
  for (const std::string& word : argv) {
    args.push_back(const_cast<char*>(word.c_str()));
  }
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork failed: ") + std::strerror(errno);
    return -1;
  }
  if (pid == 0) {
    // The compiler dies with the plugin (tune kills a plugin that runs past its deadline).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
      _exit(127);
    }
    std::signal(SIGPIPE, SIG_DFL);
    int in = open("/dev/null", O_RDONLY);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
        chdir(dir.c_str()) != 0) {
      _exit(127);
    }
    execvp(args[0], args.data());
    // Only this thread exists in the child (the plugin has one), so strerror is safe here.
    std::string msg = "cannot run the C compiler '" + argv[0] + "': " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      *error = std::string("waitpid failed: ") + std::strerror(errno);
      return -1;
    }
  }
  return status;
}

}  // namespace

std::optional<std::string> CompileC(const std::string& source, std::string* error) {
  TempDir dir;
  if (dir.path().empty()) {
    *error = std::string("cannot create a temporary directory: ") + std::strerror(errno);
    return std::nullopt;
  }
  {
    std::ofstream src(dir.path() / "src.c", std::ios::binary);
    src << source;
    if (!src.flush()) {
      *error = "cannot write " + (dir.path() / "src.c").string();
      return std::nullopt;
    }
  }
  const std::vector<std::string> argv = CompilerCommand();
  const fs::path log = dir.path() / "cc.log";
  int status = Run(argv, dir.path(), log, error);
  if (status == -1) {
    return std::nullopt;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string output = ReadFile(log).value_or("");
    if (output.size() > kMaxLog) {
      output = output.substr(0, kMaxLog) + "\n[... compiler output truncated]";
    }
    std::string how = WIFEXITED(status)
                          ? "exited with status " + std::to_string(WEXITSTATUS(status))
                          : "was killed by signal " + std::to_string(WTERMSIG(status));
    *error = "C compiler failed (`" + Describe(argv) + "` " + how + "):\n" + output;
    return std::nullopt;
  }
  std::optional<std::string> object = ReadFile(dir.path() / "out.o");
  if (!object || object->empty()) {
    *error = "the C compiler succeeded but wrote no out.o";
    return std::nullopt;
  }
  return object;
}

}  // namespace c_codegen_plugin
