// Text templates, embedded in the library at build time from src/emit/templates (every *.py and
// *.txt there; its README describes the marker line below which a file's text is embedded).
// cmake/tad_templates.cmake generates the table; no file is read at run time.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace tad::emit {

namespace detail {

struct EmbeddedTemplate {
    const char *name;  // file name, without the directory
    const unsigned char *text;  // NUL-terminated
    size_t size;  // bytes, without the NUL
};

// Sorted by name; ends with {nullptr, nullptr, 0}. Defined by the generated source.
extern const EmbeddedTemplate kEmbeddedTemplates[];

}  // namespace detail

// The embedded text of src/emit/templates/<name>, e.g. "module_runtime.py": the part below its
// marker line, byte for byte. Throws tad::Error (TAD_ERR_INTERNAL) for a name not embedded.
inline std::string_view template_text(std::string_view name) {
    for (const detail::EmbeddedTemplate *t = detail::kEmbeddedTemplates; t->name; ++t)
        if (name == t->name) return {reinterpret_cast<const char *>(t->text), t->size};
    fail(TAD_ERR_INTERNAL, "no template named '" + std::string(name) + "' is embedded (src/emit/templates)");
}

// The names of every embedded template, sorted.
inline std::vector<std::string_view> template_names() {
    std::vector<std::string_view> names;
    for (const detail::EmbeddedTemplate *t = detail::kEmbeddedTemplates; t->name; ++t) names.push_back(t->name);
    return names;
}

}  // namespace tad::emit
