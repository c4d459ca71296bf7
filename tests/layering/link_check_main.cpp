// Linked with every kernel object and kb_tl only (CMakeLists.txt,
// kb_kernels_link_check): building it is the check; it is never run.
int main() { return 0; }
