#pragma once
// Report files (--json, --csv, membench/occupancy --json, trace -o) are written whole or not at
// all: the text goes to a temporary file beside the target and is renamed over it only when
// complete, so a failed or killed run never leaves a truncated report nor destroys the previous
// one. Write errors (a full disk, /dev/full) are input errors naming the option and the file.
#include <fstream>
#include <string>
#include <vector>

namespace accelsim {

class OutputFile {
public:
    // Opens the temporary file now, so an unwritable folder fails before any simulation runs.
    // A target that exists and is not a regular file (a terminal, /dev/stdout, a pipe) is
    // written directly: renaming a file over it would replace the device.
    OutputFile(std::string option, std::string path);
    ~OutputFile();  // an uncommitted temporary file is removed
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    std::ostream& stream() { return file_; }
    // Flushes, checks every write and moves the file into place; throws InputError on failure.
    void commit();

private:
    std::string option_, path_, temporary_;  // temporary_ empty: written directly
    std::ofstream file_;
    bool committed_ = false;
};

// Creates `dir` (and its parents) for an option's files unless it exists; throws InputError naming
// the option and the folder when it cannot (a file of that name, no permission).
void create_output_directory(const std::string& option, const std::string& dir);

// Writes text whole to path through an OutputFile (option names it in errors), or to
// standard_output when path is empty.
void write_text_output(const std::string& option, const std::string& path, const std::string& text,
                       std::ostream& standard_output);

struct NamedPath {
    std::string option;  // "--json", "--config", ...
    std::string path;
};

// Throws InputError when an output is the same file as an input or as another output (the
// input would be overwritten, or one report would replace the other). Empty paths are skipped.
void check_outputs_are_distinct(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace accelsim
