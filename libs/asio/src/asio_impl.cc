// The one translation unit that compiles Boost.Asio's and Boost.Beast's implementation
// (libs/asio/CMakeLists.txt).
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
