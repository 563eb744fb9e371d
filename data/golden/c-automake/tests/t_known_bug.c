int add(int a, int b);
int main(void) { return add(1, 1) == 3 ? 0 : 1; }
