// What the status line says while a backlog's history is read (core/ingest/backfill_plan.hpp):
// "history: 31% - steps 0-123 of 0-399 on 64 ranks"; empty once it is all read and judged.
#pragma once

#include <string>

#include "core/ingest/backfill_plan.hpp"

namespace msmon::tui {

std::string backfill_text(const BackfillProgress& p, bool unicode);

}  // namespace msmon::tui
