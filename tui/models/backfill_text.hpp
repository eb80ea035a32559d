// What the status line says while a backlog's history is read (core/ingest/backfill_plan.hpp):
// "history: 31% - steps 0-123 of 0-399 on 64 ranks" (every rank read through step 123), "reading 0-399" before a
// first step of every rank is in, "judging the newest steps" once every file is read; empty once read and judged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/ingest/backfill_plan.hpp"

namespace msmon::tui {

std::string backfill_text(const BackfillProgress& p, bool unicode);
// The steps no rank has been read for yet, while history is read; nullopt otherwise.
std::optional<std::pair<std::int64_t, std::int64_t>> unread_span(const BackfillProgress& p);

}  // namespace msmon::tui
