/* test_query_indexed.c - every test of test_query.c again, each trace with a persistent
   index attached (built in memory by fq_index_build): the index must not change a single
   result, count, listing, pick or report. */
#define TQ_WITH_INDEX 1
#include "test_query.c"
