// UTF-8 for the gateway's JSON and close reasons (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
// Contract: NextCodePoint returns the code point of the well-formed sequence at text[*i]
// and advances *i past it, or returns -1 and leaves *i as it was. `*i < text.size()`.
// AppendUtf8 appends the encoding of `cp`, a scalar value (not a surrogate, <= U+10FFFF).
// Thread-safety: pure functions.
#ifndef COURTPIECE_SERVICES_GATEWAY_UTF8_H_
#define COURTPIECE_SERVICES_GATEWAY_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace courtpiece::gateway {

int32_t NextCodePoint(std::string_view text, size_t* i);
void AppendUtf8(uint32_t cp, std::string* out);

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_UTF8_H_
