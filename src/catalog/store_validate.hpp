#pragma once
/// OfferQuery::validate without its filter check: for a store that parses the filter itself right
/// after (SqliteOfferStore::query parsed each query's filter twice, once to validate it and once
/// to compile it: issue 11, fuzz_filter's cost). Throws what validate() throws, in the same order.
#include "catalog/store.hpp"

namespace gpuplan {

void validate_query_options(const OfferQuery& q);

}  // namespace gpuplan
