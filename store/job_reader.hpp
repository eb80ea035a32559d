// A run to read, named as a person names it: a job folder (its default store, brought up to date first: what is new
// in the folder is ingested, unless another msmon already follows it) or a store file. What read commands take as
// DIR, and what --baseline takes.
#pragma once

#include <memory>
#include <string>

#include "store/reader.hpp"

namespace msmon {

// A reader with the derived kinds (store/derived_reader.hpp); nullptr with `error` set when it cannot.
std::unique_ptr<Reader> open_job_or_store(const std::string& path, std::string& error, const StoreAccess& access = {});

// The job folder `dir`: its default store, with what is new in the folder ingested first. nullptr with `error`.
std::unique_ptr<Reader> open_job_folder(const std::string& dir, std::string& error, const StoreAccess& access = {});

}  // namespace msmon
