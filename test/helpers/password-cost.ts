/**
 * scrypt parameters for tests that hash and check passwords by the dozen, through the
 * Accounts service's test seam (passwordCost) or hashPassword's cost: 32 times cheaper
 * than production's, which test/access/accounts/accounts.test.ts and passwords.test.ts check.
 */

export const TEST_PASSWORD_COST = { N: 1024, r: 8, p: 1 } as const;
