// "(DIR | --db PATH | --store URL)": which store a read command uses, brought up to date with DIR first when possible.
#pragma once

#include <memory>
#include <string>

#include "core/args/arg_parser.hpp"
#include "store/reader.hpp"

namespace msmon {

// Opens the reader for the command's target (--store: the whole job in ClickHouse). With DIR, files not yet read are
// ingested first unless another msmon holds the store (it is then already following them). Returns nullptr with `error`
// on failure; `usage` is set when the arguments were wrong.
std::unique_ptr<Reader> open_target_reader(const ParsedArgs& args, std::string& error, bool& usage);

// --trust-db-folder, as every command that opens a store takes it (store/store_location.hpp says what it allows).
inline OptionSpec trust_db_folder_option() {
    return {kTrustDbFolderOption, "",
            "use a store whose folder someone other than you or root can write, or reached through their\n"
            "link (refused otherwise: they could plant its -wal, -shm or lock file)"};
}

}  // namespace msmon
