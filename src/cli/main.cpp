#include "cli/command.hpp"

int main(int argc, char** argv) { return gpuplan::cli::run(argc, argv); }
