/* placeholder until the sender lands */
#include <stdio.h>
int main(void);
int
main(void)
{
	fputs("hookinbox-send: not built yet\n", stderr);
	return 69;
}
