// Snapshot ids and meta.json: the parts of the store's on-disk format that are not file plumbing.
#pragma once

#include <cstdint>
#include <string>

#include "store/store.h"
#include "support/json.h"

namespace tad::store {

// "<seq, zero-padded to 4>-<8 hex digits of a content hash>", e.g. "0003-9f2c1ab0".
std::string make_id(int64_t seq, const Candidate &c);
bool is_snapshot_id(const std::string &name);
int64_t seq_of(const std::string &id);  // id must satisfy is_snapshot_id

std::string utc_now_iso8601();

// 16 hex digits of a 64-bit FNV-1a hash of `text`: tells a changed file from the one stored. It
// guards against damage and edits, not against someone who can write the work directory (who could
// rewrite meta.json as well).
std::string content_hash(const std::string &text);

Json meta_to_json(const SnapshotInfo &info);
// TAD_ERR_IO naming `path` when the text is not a meta object for snapshot `id`.
SnapshotInfo meta_from_json(const std::string &text, const std::string &id, const std::string &path);

}  // namespace tad::store
